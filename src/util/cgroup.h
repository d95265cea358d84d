// cgroup v2, the little of it a launcher needs to track every process its
// workers start: find this process's own cgroup, kill everything in a
// cgroup, remove one.
#pragma once

#include <chrono>
#include <optional>
#include <string>

namespace dlaunch::util {

// The folder of this process's cgroup in the cgroup v2 hierarchy, from
// /proc/self/cgroup and the cgroup2 mount in /proc/self/mountinfo (hybrid
// hosts mount it at /sys/fs/cgroup/unified). nullopt when there is no
// cgroup v2 mount this process's cgroup is visible in.
std::optional<std::string> own_cgroup_dir();

// Kills every process in the cgroup DIR and below it: cgroup.kill where the
// kernel has it (5.14 and later), else SIGKILL to each pid in cgroup.procs,
// again until none is left (a few dozen passes at most, about 0.1 s).
void kill_cgroup(const std::string& dir);

// Removes the cgroup DIR and any cgroups below it, waiting at most LIMIT
// for the processes in them to go. True when DIR is gone; false (errno
// set) when it could not be removed.
bool remove_cgroup(const std::string& dir, std::chrono::milliseconds limit);

}  // namespace dlaunch::util
