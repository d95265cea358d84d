// How many processes the kernel's OOM killer has killed in this process's
// memory cgroup: the evidence that a worker's SIGKILL came from running out
// of host memory (a cgroup limit such as Slurm's step cgroup, or the whole
// host), not from a person or another program.
//
// The kernel counts OOM kills in the memory cgroup itself: cgroup v2's
// memory.events ("oom_kill N", counted for the cgroup and everything below
// it) and cgroup v1's memory.oom_control ("oom_kill N", counted in the
// victim's own memory cgroup: a worker shares its launcher's). Both are
// readable by the cgroup's owner, unlike the kernel log, which
// kernel.dmesg_restrict keeps from users on most distributions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace dlaunch::util {

// The "oom_kill N" line of memory.events (v2) or memory.oom_control (v1);
// nullopt when TEXT has none. Pure.
std::optional<std::uint64_t> parse_oom_kill_count(std::string_view text);

// The v1 memory cgroup path of a /proc/PID/cgroup text: the PATH of its
// "N:CONTROLLERS:PATH" line whose controllers include "memory". Pure.
std::optional<std::string> memory_cgroup_v1_path(std::string_view proc_cgroup);

// The file that counts this process's memory cgroup's OOM kills: the v2
// cgroup's memory.events, else the v1 memory cgroup's memory.oom_control;
// nullopt when neither can be read (no memory controller, the root cgroup).
std::optional<std::string> own_oom_count_file();

// The count when made, and what has been added since.
class OomCounter {
 public:
  // Reads FILE (own_oom_count_file() by default) once now.
  OomCounter();
  explicit OomCounter(std::optional<std::string> file);

  // OOM kills since this counter was made; nullopt when the count cannot be read.
  std::optional<std::uint64_t> kills_since_start() const;
  const std::optional<std::string>& file() const { return file_; }

 private:
  std::optional<std::uint64_t> read() const;

  std::optional<std::string> file_;
  std::optional<std::uint64_t> start_;
};

}  // namespace dlaunch::util
