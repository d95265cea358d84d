// Catching what the workers leave outside their process groups: as the
// subreaper, an orphaned daemon becomes this process's child and is killed
// with its group, spares aside; with a cgroup, everything the workers start
// is inside it and killed with it, and the cgroup goes with the catcher; off
// catches nothing.
#include "launch/escaped_processes.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "process/worker_process.h"
#include "util/cgroup.h"
#include "util/environment.h"
#include "util/error.h"
#include "util/fd.h"

namespace dlaunch::launch {
namespace {

using namespace std::chrono_literals;

int reap(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

bool killed(int status) { return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL; }

// One line from FD (blocking).
std::string read_line(int fd) {
  std::string line;
  char c;
  while (util::read_retrying(fd, &c, 1) == 1 && c != '\n') line += c;
  return line;
}

// True when FD reaches end-of-file within 10 s.
bool reaches_eof(int fd) {
  auto give_up = std::chrono::steady_clock::now() + 10s;
  char buffer[256];
  while (std::chrono::steady_clock::now() < give_up) {
    pollfd ready{fd, POLLIN, 0};
    if (::poll(&ready, 1, 100) <= 0) continue;
    ssize_t got = util::read_retrying(fd, buffer, sizeof(buffer));
    if (got <= 0) return got == 0;
  }
  return false;
}

int subreaper_flag() {
  int flag = -1;
  ::prctl(PR_GET_CHILD_SUBREAPER, &flag);
  return flag;
}

process::StartedWorker start(const std::string& script, int cgroup_procs_fd = -1) {
  auto worker = process::start_worker({"/bin/sh", "-c", script}, util::Environment::from_process(), -1,
                                      cgroup_procs_fd);
  EXPECT_EQ(process::confirm_exec(worker).error, 0);
  return worker;
}

// A worker that double-forks a daemon in a session of its own (which
// prints its pid, then sleeps) and exits; returns the daemon's pid, once
// the worker is reaped.
pid_t orphan_a_daemon(process::StartedWorker& worker) {
  worker = start("setsid sh -c 'echo $$; exec sleep 300' &");
  std::string pid = read_line(worker.stdout_pipe.get());
  reap(worker.pid);
  return static_cast<pid_t>(std::stol(pid));
}

TEST(EscapedProcesses, AsSubreaperAnOrphanedDaemonIsCaughtAndKilled) {
  process::StartedWorker worker;
  pid_t daemon = 0;
  {
    EscapedProcesses escaped(KillEscaped::kSubreaper);
    EXPECT_EQ(escaped.mode(), KillEscaped::kSubreaper);
    EXPECT_EQ(subreaper_flag(), 1);
    EXPECT_EQ(escaped.cgroup_procs_fd(), -1);
    EXPECT_EQ(escaped.cgroup_dir(), "");
    // A worker the launcher still runs (the watchdog, say) is spared.
    process::StartedWorker spare = start("exec sleep 300");
    daemon = orphan_a_daemon(worker);
    ASSERT_GT(daemon, 1);
    EXPECT_NE(::getpgid(daemon), worker.pid);  // escaped the worker's group

    std::vector<pid_t> leftovers = escaped.kill_leftovers({spare.pid});
    EXPECT_NE(std::find(leftovers.begin(), leftovers.end(), daemon), leftovers.end());
    EXPECT_EQ(std::find(leftovers.begin(), leftovers.end(), spare.pid), leftovers.end());
    // The daemon was this process's child, so it is reaped here.
    EXPECT_TRUE(killed(reap(daemon)));
    for (pid_t other : leftovers)
      if (other != daemon) reap(other);  // left by other tests, if any
    EXPECT_TRUE(reaches_eof(worker.stdout_pipe.get()));

    // The spare still runs: it dies of the test's SIGTERM, not of a SIGKILL.
    ::kill(spare.pid, SIGTERM);
    int status = reap(spare.pid);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << status;
  }
  EXPECT_EQ(subreaper_flag(), 0);
}

TEST(EscapedProcesses, OffCatchesNothing) {
  EscapedProcesses escaped(KillEscaped::kOff);
  EXPECT_EQ(subreaper_flag(), 0);
  EXPECT_EQ(escaped.cgroup_procs_fd(), -1);
  process::StartedWorker child = start("exec sleep 300");
  EXPECT_TRUE(escaped.kill_leftovers({}).empty());
  // Not killed: it is still there to be stopped.
  ::kill(child.pid, SIGTERM);
  int status = reap(child.pid);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << status;
}

// Whether a cgroup can be made below this process's own.
std::string cgroup_unusable() {
  auto own = util::own_cgroup_dir();
  if (!own) return "this process is in no cgroup v2 hierarchy";
  std::string probe = *own + "/dlaunch-unit-probe-" + std::to_string(::getpid());
  if (::mkdir(probe.c_str(), 0755) != 0)
    return "no cgroup v2 delegation here: cannot create a cgroup in " + *own + " (" +
           std::strerror(errno) + ")";
  ::rmdir(probe.c_str());
  return "";
}

TEST(EscapedProcesses, WithACgroupEverythingTheWorkersStartIsKilled) {
  if (std::string why = cgroup_unusable(); !why.empty()) GTEST_SKIP() << why;
  std::string dir;
  {
    EscapedProcesses escaped(KillEscaped::kCgroup);
    dir = escaped.cgroup_dir();
    EXPECT_EQ(dir, *util::own_cgroup_dir() + "/dlaunch-" + std::to_string(::getpid()));
    EXPECT_TRUE(std::filesystem::is_directory(dir));
    ASSERT_GE(escaped.cgroup_procs_fd(), 0);
    EXPECT_EQ(subreaper_flag(), 0);

    // A daemon that left the worker's group and session stays in the cgroup.
    process::StartedWorker worker =
        start("setsid sleep 300 & exec sleep 300", escaped.cgroup_procs_fd());
    EXPECT_TRUE(escaped.kill_leftovers({}).empty());  // nothing for the caller to reap
    bool all_gone = reaches_eof(worker.stdout_pipe.get());
    ::kill(-worker.pid, SIGKILL);  // only does something when the test fails
    EXPECT_TRUE(killed(reap(worker.pid)));
    EXPECT_TRUE(all_gone);
  }
  // The catcher removes its cgroup when it goes.
  EXPECT_FALSE(std::filesystem::exists(dir)) << dir;
}

TEST(EscapedProcesses, TheCgroupAndWhatIsLeftInItGoWithTheCatcher) {
  if (std::string why = cgroup_unusable(); !why.empty()) GTEST_SKIP() << why;
  process::StartedWorker worker;
  std::string dir;
  {
    EscapedProcesses escaped(KillEscaped::kCgroup);
    dir = escaped.cgroup_dir();
    worker = start("exec sleep 300", escaped.cgroup_procs_fd());
  }
  bool gone = reaches_eof(worker.stdout_pipe.get());
  ::kill(worker.pid, SIGKILL);  // only does something when the test fails
  EXPECT_TRUE(killed(reap(worker.pid)));
  EXPECT_TRUE(gone);
  EXPECT_FALSE(std::filesystem::exists(dir)) << dir;
}

}  // namespace
}  // namespace dlaunch::launch
