// Which processes are children of a given one, from /proc.
#pragma once

#include <optional>
#include <sys/types.h>
#include <vector>

namespace dlaunch::util {

// The pids whose parent is PARENT now (zombies included). Empty when
// /proc cannot be read; processes that exit while it reads are skipped.
// Reads the kernel's own lists, /proc/PARENT/task/TID/children (one per
// thread: a child belongs to the thread that forked it, and an adopted
// orphan to any); where the kernel has none (built without
// CONFIG_PROC_CHILDREN), falls back to child_processes_by_scan().
std::vector<pid_t> child_processes(pid_t parent);

// The same from the kernel's lists only; nullopt where the kernel has none.
std::optional<std::vector<pid_t>> child_processes_from_task_lists(pid_t parent);

// The same by reading the parent pid out of /proc/PID/stat for every
// process of the machine: works on every kernel, but costs a file read per
// process (1,024 launchers on one machine each reading 3,000 files took 14 s
// of the job's teardown, docs/BENCHMARKS.md).
std::vector<pid_t> child_processes_by_scan(pid_t parent);

}  // namespace dlaunch::util
