// Catching the processes a job's workers leave behind outside their
// process groups (--kill-escaped).
//
// Every stop signals the workers' process groups, but a process that
// leaves its group (setsid, setpgid: a daemon) escapes that. Two ways to
// catch it (docs/RELIABILITY.md, "No orphans", says what each catches):
//   subreaper  the launcher becomes the subreaper of its descendants, so an
//              orphan of the workers (a double-forked daemon) becomes its
//              child instead of init's; once a round's workers have exited,
//              the launcher kills such children and their groups
//   cgroup     every worker joins a cgroup v2 child of the launcher's own
//              cgroup before its exec; once a round's workers have exited,
//              everything in it is killed, and the watchdog does the same
//              if the launcher is killed
#pragma once

#include <string>
#include <sys/types.h>
#include <vector>

#include "launch/launch_config.h"
#include "util/fd.h"

namespace dlaunch::launch {

class EscapedProcesses {
 public:
  // Starts catching in MODE. Throws SystemError when the cgroup cannot be
  // made, naming its path, the error and --kill-escaped subreaper.
  explicit EscapedProcesses(KillEscaped mode);
  // Ends catching; kills what is left in the cgroup and removes it (within
  // about a second).
  ~EscapedProcesses();
  EscapedProcesses(const EscapedProcesses&) = delete;
  EscapedProcesses& operator=(const EscapedProcesses&) = delete;

  KillEscaped mode() const { return mode_; }
  // The workers' cgroup.procs, for start_worker(); -1 without a cgroup.
  int cgroup_procs_fd() const { return procs_.get(); }
  // The workers' cgroup folder, for the watchdog; empty without one.
  const std::string& cgroup_dir() const { return dir_; }

  // Once a round's workers have exited, kills what they left behind.
  // subreaper: every child of this process but SPARE (the watchdog), with
  // its process group; returns their pids for the caller to reap (the
  // orphans of those then become children of this process: call again).
  // cgroup: everything in the cgroup; returns nothing to reap. off: nothing.
  std::vector<pid_t> kill_leftovers(const std::vector<pid_t>& spare);

 private:
  void make_cgroup();

  KillEscaped mode_;
  std::string dir_;
  util::Fd procs_;
};

}  // namespace dlaunch::launch
