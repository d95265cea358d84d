#include "launch/escaped_processes.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

#include "util/cgroup.h"
#include "util/child_processes.h"
#include "util/error.h"

namespace dlaunch::launch {
namespace {

constexpr std::chrono::seconds kCgroupRemoval(1);

bool contains(const std::vector<pid_t>& pids, pid_t pid) {
  return std::find(pids.begin(), pids.end(), pid) != pids.end();
}

util::SystemError cgroup_error(const std::string& what, int error) {
  return util::SystemError(fmt::format(
      "--kill-escaped cgroup: {}: {}. dlaunch needs write access to its own cgroup v2 (as root, "
      "or in a cgroup delegated to you, e.g. under systemd-run --user --scope -p Delegate=yes); "
      "or use --kill-escaped subreaper (the default)",
      what, std::strerror(error)));
}

}  // namespace

EscapedProcesses::EscapedProcesses(KillEscaped mode) : mode_(mode) {
  if (mode_ == KillEscaped::kSubreaper && ::prctl(PR_SET_CHILD_SUBREAPER, 1) != 0)
    throw util::system_error("--kill-escaped subreaper: cannot become a child subreaper", errno);
  if (mode_ == KillEscaped::kCgroup) make_cgroup();
}

void EscapedProcesses::make_cgroup() {
  auto own = util::own_cgroup_dir();
  if (!own)
    throw util::SystemError(
        "--kill-escaped cgroup needs cgroup v2, and this process is in no cgroup v2 hierarchy (no "
        "cgroup2 mount in /proc/self/mountinfo, or no '0::' line in /proc/self/cgroup); use "
        "--kill-escaped subreaper (the default)");
  dir_ = fmt::format("{}/dlaunch-{}", *own, ::getpid());
  int made = ::mkdir(dir_.c_str(), 0755);
  // A folder of that name is left from an earlier launcher with our pid.
  if (made != 0 && errno == EEXIST && util::remove_cgroup(dir_, std::chrono::milliseconds(0)))
    made = ::mkdir(dir_.c_str(), 0755);
  if (made != 0) {
    int error = errno;
    std::string path = std::exchange(dir_, "");
    throw cgroup_error(fmt::format("cannot create the cgroup {}", path), error);
  }
  procs_.reset(::open((dir_ + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC));
  if (!procs_) {
    int error = errno;
    util::remove_cgroup(dir_, std::chrono::milliseconds(0));
    std::string path = std::exchange(dir_, "");
    throw cgroup_error(fmt::format("cannot open {}/cgroup.procs to move workers in", path), error);
  }
}

EscapedProcesses::~EscapedProcesses() {
  if (mode_ == KillEscaped::kSubreaper) ::prctl(PR_SET_CHILD_SUBREAPER, 0);
  if (dir_.empty()) return;
  procs_.reset();
  util::kill_cgroup(dir_);
  util::remove_cgroup(dir_, kCgroupRemoval);
}

std::vector<pid_t> EscapedProcesses::kill_leftovers(const std::vector<pid_t>& spare) {
  if (mode_ == KillEscaped::kCgroup) util::kill_cgroup(dir_);
  if (mode_ != KillEscaped::kSubreaper) return {};
  std::vector<pid_t> killed;
  const pid_t own_group = ::getpgrp();
  for (pid_t pid : util::child_processes(::getpid())) {
    if (contains(spare, pid)) continue;
    pid_t group = ::getpgid(pid);
    ::kill(pid, SIGKILL);
    // Its group too (a setsid daemon's helpers), never the launcher's own.
    if (group > 1 && group != own_group && !contains(spare, group)) ::kill(-group, SIGKILL);
    killed.push_back(pid);
  }
  return killed;
}

}  // namespace dlaunch::launch
