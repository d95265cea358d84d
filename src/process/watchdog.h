// Kills the workers if the launcher dies without doing it itself.
//
// PR_SET_PDEATHSIG only reaches a launcher's direct children; a worker's own
// children (data loaders, compilers, shells) would survive a SIGKILL of the
// launcher. The watchdog is a tiny forked process that knows every worker's
// process group and, when its pipe from the launcher closes for any reason,
// sends SIGKILL to each group still registered, and to everything in the
// workers' cgroup (--kill-escaped cgroup), which it then removes.
#pragma once

#include <string>
#include <sys/types.h>

#include "util/fd.h"

namespace dlaunch::process {

class Watchdog {
 public:
  // Forks the watchdog. Call while the process has a single thread.
  // CGROUP_DIR: the workers' cgroup, killed and removed when the launcher
  // dies; empty when none. Throws SystemError when fork fails.
  explicit Watchdog(const std::string& cgroup_dir = "");
  // Closes the pipe (the watchdog then exits) and reaps it.
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  void watch(pid_t group);    // kill GROUP if the launcher dies
  void release(pid_t group);  // GROUP is gone; forget it

  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  util::Fd pipe_;
};

}  // namespace dlaunch::process
