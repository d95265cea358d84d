// Which processes are children of a given one, from /proc.
#pragma once

#include <sys/types.h>
#include <vector>

namespace dlaunch::util {

// The pids whose parent is PARENT now, read from /proc/PID/stat (which
// works on every kernel, unlike /proc/PID/task/TID/children). Empty when
// /proc cannot be read; processes that exit while it reads are skipped.
std::vector<pid_t> child_processes(pid_t parent);

}  // namespace dlaunch::util
