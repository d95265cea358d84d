// The checks a node runs before it joins a new round (round > 0), so that a
// node the last round left unfit (a full log disk, a worker that did not
// die, GPU memory still held, whatever the site's own script tests) is
// benched for a spare instead of failing the next attempt too.
//
// Each check gives nothing (ok) or one line that names the check, the host
// and what to do. The judgements are pure functions of what was measured
// (free bytes, nvidia-smi's text, the groups still alive, a command's
// result), so they are unit-tested without a GPU; HealthChecks does the
// measuring: statvfs, kill(-group, 0), the cgroup's cgroup.procs, the
// kernel log (util/kernel_log), and nvidia-smi and --health-check run
// through forensics::ToolRuns (started by
// util/program_spawn with stdin from /dev/null, each in a process group of
// its own that is killed at the timeout, output capped to its tail).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "forensics/tool_runs.h"
#include "util/environment.h"
#include "util/kernel_log.h"

namespace dlaunch::launch {

// A file system needs at least this much free room for the next round's
// logs and checkpoints...
inline constexpr std::uint64_t kMinFreeBytes = 1ULL << 30;  // 1 GiB
// ... or, on one smaller than 100 GiB (a test's tmpfs), 1% of its size.
inline constexpr std::uint64_t kMinFreePercent = 1;
// A GPU whose workers exited is "free again" when it holds at most this
// much (the driver's own context and a display take a few hundred MiB).
inline constexpr std::uint64_t kGpuUsedLimitMiB = 1024;

struct HealthCheckSettings {
  std::optional<std::string> command;  // --health-check: run by /bin/sh -c; nullopt: none
  std::chrono::milliseconds command_timeout{60'000};
  // nvidia-smi may take this long per call; GPU memory this long to be freed.
  std::chrono::milliseconds gpu_timeout{10'000};
  std::chrono::milliseconds gpu_wait{10'000};
  std::size_t output_lines = 5;  // of a failed command's output, in its reason
  // Where the kernel's messages are read for Xid errors (a plain file in tests).
  std::string kernel_log = "/dev/kmsg";
};

// ---- the pure judgements

// The free bytes a file system of TOTAL_BYTES needs: kMinFreeBytes, or 1%
// of a smaller one.
std::uint64_t required_free_bytes(std::uint64_t total_bytes);

// FOLDER's file system with AVAILABLE_BYTES free (for an unprivileged
// user) of TOTAL_BYTES: a reason when it has too little room.
std::optional<std::string> disk_problem(std::uint64_t available_bytes, std::uint64_t total_bytes,
                                        const std::string& folder, const std::string& host);

// nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits: a line
// of MiB per GPU. A reason when a GPU holds more than LIMIT_MIB, or when
// the text is not what that query prints.
std::optional<std::string> gpu_memory_problem(std::string_view nvidia_smi_output, std::uint64_t limit_mib,
                                              const std::string& host);

// The previous round's workers' process groups that still have a process
// (ALIVE_GROUPS), and the processes left in the workers' cgroup: a reason
// when any is.
std::optional<std::string> leftover_problem(const std::vector<pid_t>& alive_groups,
                                            const std::vector<pid_t>& cgroup_processes, const std::string& host);

// The user's COMMAND ended with RESULT: a reason unless it exited 0,
// with the last LINES lines of its output.
std::optional<std::string> command_problem(const std::string& command, const forensics::ToolResult& result,
                                           std::chrono::milliseconds timeout, std::size_t lines,
                                           const std::string& host);

// ---- the measuring

class HealthChecks {
 public:
  // ENVIRONMENT is the launcher's: PATH finds nvidia-smi, and the command
  // runs with it. SAY gets the notes said once (nvidia-smi absent).
  HealthChecks(HealthCheckSettings settings, util::Environment environment, std::string host,
               std::string log_folder, std::function<void(const std::string&)> say);

  // Every check before ROUND, in order: disk, leftovers, GPU memory, GPU
  // errors (Xid lines the kernel logged since this object was made or last
  // asked; ECC counts where nvidia-smi is), the user's command. Returns the
  // first problem, or nullopt when all pass.
  // WORKER_GROUPS: the process groups of the previous round's workers;
  // CGROUP_DIR: their cgroup ("" without one). KEEP_ALIVE, when given, is
  // called at least every forensics::ToolRuns::kTickEvery while the checks
  // run: checks may take longer than node 0 waits for a silent launcher
  // (--heartbeat-timeout), so the launcher answers it meanwhile.
  std::optional<std::string> run(int round, const std::vector<pid_t>& worker_groups,
                                 const std::string& cgroup_dir, std::function<void()> keep_alive = {});

 private:
  std::optional<std::string> check_disk() const;
  std::optional<std::string> check_gpu_memory();
  std::optional<std::string> check_gpu_errors();
  std::optional<std::string> check_command(int round) const;
  forensics::ToolResult run_tool(std::vector<std::string> argv, std::vector<std::string> environment,
                                 std::chrono::milliseconds timeout) const;
  void pause(std::chrono::milliseconds length) const;

  HealthCheckSettings settings_;
  util::Environment environment_;
  std::string host_;
  std::string log_folder_;
  std::function<void(const std::string&)> say_;
  bool said_no_nvidia_smi_ = false;
  bool said_no_kernel_log_ = false;
  util::KernelLog kernel_log_;  // opened at its end when this object is made
  std::function<void()> keep_alive_;  // the last run()'s
};

// One program run to its end or its timeout, output capped to its tail;
// TICK as forensics::ToolRuns::run takes it.
forensics::ToolResult run_bounded(std::vector<std::string> argv, std::vector<std::string> environment,
                                  std::chrono::milliseconds timeout, const std::function<void()>& tick = {});

}  // namespace dlaunch::launch
