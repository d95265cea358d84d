// The children an event loop runs, each the leader of its own process
// group (start_worker makes it so): the supervisor's workers, dlaunch ssh's
// ssh processes.
//
// Both stop theirs alike: a signal to every group still running, SIGKILL
// to those left after a grace period (a worker that ignores SIGTERM, an ssh
// that hangs), and the exited ones reaped without waiting when SIGCHLD
// says so. A group is signalled through its leader's pid, so only while
// the leader is not reaped: a reaped pid may be reused.
#pragma once

#include <chrono>
#include <csignal>
#include <functional>
#include <sys/types.h>
#include <vector>

#include "process/event_loop.h"

namespace dlaunch::process {

// A child that exited, as waitpid() told it.
struct ChildExit {
  pid_t pid = 0;
  int exit_code = 0;  // 128+N when killed by signal N
  int signal = 0;     // N, or 0 when it exited
  bool leader = false;  // one of the running groups' leaders (then no longer running)
};

class ProcessGroups {
 public:
  // LOOP times the SIGKILL after a grace period; it must outlive this.
  explicit ProcessGroups(EventLoop& loop) : loop_(loop) {}
  ~ProcessGroups() { loop_.cancel(kill_timer_); }
  ProcessGroups(const ProcessGroups&) = delete;
  ProcessGroups& operator=(const ProcessGroups&) = delete;

  // LEADER, a child in a group of its own, runs.
  void add(pid_t leader) { running_.push_back(leader); }
  // LEADER was reaped by its owner: no longer signalled.
  void forget(pid_t leader);
  bool running(pid_t leader) const;
  std::size_t running() const { return running_.size(); }

  // SIGNAL to every running group.
  void signal(int signal) const;
  // SIGKILL to every group still running after GRACE (at once when GRACE is
  // 0). A later call replaces the SIGKILL an earlier one left pending.
  void kill_after(std::chrono::milliseconds grace);
  // SIGTERM now, SIGKILL after GRACE.
  void stop(std::chrono::milliseconds grace) {
    signal(SIGTERM);
    kill_after(grace);
  }

  // Reaps every child of this process that has exited, without waiting: a
  // running group's leader, or another child (with --kill-escaped the
  // launcher adopts orphans). EXITED gets each, its leader already
  // forgotten, so a stop it begins signals only the others.
  void reap(const std::function<void(const ChildExit&)>& exited);

 private:
  EventLoop& loop_;
  std::vector<pid_t> running_;
  EventLoop::Timer kill_timer_;
};

}  // namespace dlaunch::process
