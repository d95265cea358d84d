#include "process/process_groups.h"
#include "util/exit_codes.h"

#include <algorithm>
#include <csignal>
#include <sys/wait.h>

namespace dlaunch::process {

void ProcessGroups::forget(pid_t leader) {
  running_.erase(std::remove(running_.begin(), running_.end(), leader), running_.end());
}

bool ProcessGroups::running(pid_t leader) const {
  return std::find(running_.begin(), running_.end(), leader) != running_.end();
}

void ProcessGroups::signal(int signal) const {
  for (pid_t leader : running_) ::kill(-leader, signal);
}

void ProcessGroups::kill_after(std::chrono::milliseconds grace) {
  loop_.cancel(kill_timer_);
  if (grace.count() == 0) return signal(SIGKILL);
  kill_timer_ = loop_.at(EventLoop::Clock::now() + grace, [this] {
    kill_timer_ = EventLoop::Timer();
    signal(SIGKILL);
  });
}

void ProcessGroups::reap(const std::function<void(const ChildExit&)>& exited) {
  int status = 0;
  pid_t pid;
  // __WNOTHREAD: only this thread's children. A stack capture runs its
  // tools, and ptraces workers, from a thread of its own and waits for
  // them itself; a stop of a traced worker is not an exit.
  while ((pid = ::waitpid(-1, &status, WNOHANG | __WNOTHREAD)) > 0) {
    if (!WIFEXITED(status) && !WIFSIGNALED(status)) continue;
    ChildExit child;
    child.pid = pid;
    child.signal = util::signal_of_wait_status(status);
    child.exit_code = util::exit_code_of_wait_status(status);
    child.leader = running(pid);
    if (child.leader) forget(pid);
    exited(child);
  }
}

}  // namespace dlaunch::process
