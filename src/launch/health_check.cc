// The checks a node runs between rounds: pure judgements, then the
// measuring that feeds them (launch/health_check.h).
#include "launch/health_check.h"

#include <fmt/format.h>
#include <csignal>
#include <fstream>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <thread>
#include <utility>

#include "doctor/gpu_errors.h"
#include "process/worker_process.h"
#include "util/strings.h"

namespace dlaunch::launch {
namespace {

std::string gib(std::uint64_t bytes) { return fmt::format("{:.1f} GiB", static_cast<double>(bytes) / (1ULL << 30)); }

std::string pid_list(const std::vector<pid_t>& pids) {
  std::vector<std::string> words;
  for (std::size_t i = 0; i < pids.size() && i < 5; ++i) words.push_back(std::to_string(pids[i]));
  if (pids.size() > 5) words.push_back("...");
  return util::join(words, ", ");
}

// The last LINES non-empty lines of TEXT, joined by " | " to stay one line.
std::string last_lines(const std::string& text, std::size_t lines) {
  std::vector<std::string> kept;
  for (const auto& line : util::split(text, '\n')) {
    auto trimmed = util::trim(line);
    if (!trimmed.empty()) kept.emplace_back(trimmed);
  }
  if (kept.size() > lines) kept.erase(kept.begin(), kept.end() - static_cast<std::ptrdiff_t>(lines));
  return util::escaped(util::join(kept, " | "));
}

// The pids in a cgroup's cgroup.procs; none when it cannot be read.
std::vector<pid_t> cgroup_processes(const std::string& dir) {
  std::vector<pid_t> pids;
  if (dir.empty()) return pids;
  std::ifstream procs(dir + "/cgroup.procs");
  for (long pid = 0; procs >> pid;) pids.push_back(static_cast<pid_t>(pid));
  return pids;
}

// A process killed at the round's end may take a moment to go.
constexpr std::chrono::milliseconds kLeftoverGrace(2000);

// The groups of GROUPS that still have a process, and what the cgroup at
// CGROUP_DIR holds, after up to kLeftoverGrace. A worker's orphan becomes
// this launcher's child (the subreaper) and, dead, stays a zombie of the
// group until reaped: reaped here, so only the living count.
std::pair<std::vector<pid_t>, std::vector<pid_t>> leftovers(const std::vector<pid_t>& groups,
                                                            const std::string& cgroup_dir,
                                                            const std::function<void()>& keep_alive) {
  const auto deadline = std::chrono::steady_clock::now() + kLeftoverGrace;
  for (;;) {
    std::vector<pid_t> alive;
    for (pid_t group : groups) {
      if (group <= 0) continue;
      while (::waitpid(-group, nullptr, WNOHANG) > 0) {
      }
      if (::kill(-group, 0) == 0) alive.push_back(group);
    }
    std::vector<pid_t> in_cgroup = cgroup_processes(cgroup_dir);
    if ((alive.empty() && in_cgroup.empty()) || std::chrono::steady_clock::now() >= deadline)
      return {alive, in_cgroup};
    if (keep_alive) keep_alive();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace

std::uint64_t required_free_bytes(std::uint64_t total_bytes) {
  return std::min(kMinFreeBytes, total_bytes / 100 * kMinFreePercent);
}

std::optional<std::string> disk_problem(std::uint64_t available_bytes, std::uint64_t total_bytes,
                                        const std::string& folder, const std::string& host) {
  const std::uint64_t needed = required_free_bytes(total_bytes);
  if (available_bytes >= needed) return std::nullopt;
  return fmt::format("health check 'disk' failed on {}: the file system of the log folder {} has {} free of {}, "
                     "less than the {} the next round needs; free room there or give --log-dir on another "
                     "file system",
                     host, folder, gib(available_bytes), gib(total_bytes), gib(needed));
}

std::optional<std::string> gpu_memory_problem(std::string_view nvidia_smi_output, std::uint64_t limit_mib,
                                              const std::string& host) {
  std::vector<std::string> held;
  int gpu = 0;
  for (const auto& line : util::split(nvidia_smi_output, '\n')) {
    auto text = util::trim(line);
    if (text.empty()) continue;
    auto used = util::parse_int(text);
    if (!used || *used < 0)
      return fmt::format("health check 'gpu-memory' failed on {}: nvidia-smi printed '{}', not MiB in use; run "
                         "nvidia-smi on that host to see what is wrong with its GPUs",
                         host, util::escaped(text.substr(0, 80)));
    if (static_cast<std::uint64_t>(*used) > limit_mib) held.push_back(fmt::format("GPU {}: {} MiB", gpu, *used));
    ++gpu;
  }
  if (held.empty()) return std::nullopt;
  return fmt::format("health check 'gpu-memory' failed on {}: memory is still in use after the previous round's "
                     "workers exited ({}; more than {} MiB); a process still holds the GPU: nvidia-smi on that "
                     "host names it",
                     host, util::join(held, ", "), limit_mib);
}

std::optional<std::string> leftover_problem(const std::vector<pid_t>& alive_groups,
                                            const std::vector<pid_t>& cgroup_processes, const std::string& host) {
  if (alive_groups.empty() && cgroup_processes.empty()) return std::nullopt;
  std::string what = !alive_groups.empty()
                         ? fmt::format("the process group(s) {} of the previous round's workers still have a "
                                       "process",
                                       pid_list(alive_groups))
                         : fmt::format("the workers' cgroup still holds process(es) {}", pid_list(cgroup_processes));
  return fmt::format("health check 'leftover-workers' failed on {}: {}; a process in an uninterruptible sleep "
                     "(D state: a hung file system or driver) survives SIGKILL; look at it with ps on that host",
                     host, what);
}

std::optional<std::string> command_problem(const std::string& command, const forensics::ToolResult& result,
                                           std::chrono::milliseconds timeout, std::size_t lines,
                                           const std::string& host) {
  if (result.exit_code == 0 && !result.timed_out) return std::nullopt;
  std::string how =
      result.timed_out
          ? fmt::format("did not end within {} s and was killed with its process group",
                        std::chrono::duration_cast<std::chrono::seconds>(timeout).count())
          : fmt::format("exited with {}", result.exit_code);
  std::string output = last_lines(result.output, lines);
  return fmt::format("health check '--health-check {}' failed on {}: it {}{}; fix the node or the check "
                     "(--health-check-timeout sets its limit)",
                     util::escaped(command), host, how,
                     output.empty() ? std::string() : fmt::format(" (last output: {})", output));
}

forensics::ToolResult run_bounded(std::vector<std::string> argv, std::vector<std::string> environment,
                                  std::chrono::milliseconds timeout, const std::function<void()>& tick) {
  forensics::ToolResult result;
  forensics::ToolRuns runs(1, forensics::KeptOutput::kTail);
  forensics::ToolRequest request;
  request.argv = std::move(argv);
  request.environment = std::move(environment);
  request.timeout = timeout;
  request.on_done = [&result](const forensics::ToolResult& done) { result = done; };
  runs.start(std::move(request));
  runs.run(tick);
  return result;
}

HealthChecks::HealthChecks(HealthCheckSettings settings, util::Environment environment, std::string host,
                           std::string log_folder, std::function<void(const std::string&)> say)
    : settings_(std::move(settings)),
      environment_(std::move(environment)),
      host_(std::move(host)),
      log_folder_(std::move(log_folder)),
      say_(std::move(say)),
      kernel_log_(settings_.kernel_log) {}

std::optional<std::string> HealthChecks::run(int round, const std::vector<pid_t>& worker_groups,
                                             const std::string& cgroup_dir, std::function<void()> keep_alive) {
  keep_alive_ = std::move(keep_alive);
  if (auto problem = check_disk()) return problem;
  auto [alive, in_cgroup] = leftovers(worker_groups, cgroup_dir, keep_alive_);
  if (auto problem = leftover_problem(alive, in_cgroup, host_)) return problem;
  if (auto problem = check_gpu_memory()) return problem;
  if (auto problem = check_gpu_errors()) return problem;
  return check_command(round);
}

std::optional<std::string> HealthChecks::check_disk() const {
  struct statvfs info {};
  // A folder that cannot be read is the supervisor's to report, with its path.
  if (log_folder_.empty() || ::statvfs(log_folder_.c_str(), &info) != 0) return std::nullopt;
  const std::uint64_t unit = info.f_frsize;
  return disk_problem(info.f_bavail * unit, info.f_blocks * unit, log_folder_, host_);
}

// The driver frees a dead process's memory a moment after it exits: asked
// again each second until gpu_wait has passed.
std::optional<std::string> HealthChecks::check_gpu_memory() {
  auto nvidia_smi = process::find_executable("nvidia-smi", environment_);
  if (!nvidia_smi) {
    if (!said_no_nvidia_smi_ && say_)
      say_(fmt::format("dlaunch: health check 'gpu-memory' skipped on {}: no nvidia-smi in PATH", host_));
    said_no_nvidia_smi_ = true;
    return std::nullopt;
  }
  const auto deadline = std::chrono::steady_clock::now() + settings_.gpu_wait;
  for (;;) {
    auto result = run_tool({*nvidia_smi, "--query-gpu=memory.used", "--format=csv,noheader,nounits"},
                           environment_.to_entries(), settings_.gpu_timeout);
    std::optional<std::string> problem;
    if (result.timed_out || result.exit_code != 0)
      problem = fmt::format("health check 'gpu-memory' failed on {}: nvidia-smi {} ({}); a GPU or its driver "
                            "may be stuck: run nvidia-smi on that host",
                            host_, result.timed_out ? "did not answer in time" : "failed",
                            last_lines(result.output, 2));
    else problem = gpu_memory_problem(result.output, kGpuUsedLimitMiB, host_);
    if (!problem || result.timed_out || std::chrono::steady_clock::now() >= deadline) return problem;
    pause(std::chrono::seconds(1));
  }
}

// The kernel log is read on every host (an Xid line appears only where
// NVIDIA's driver runs); that it cannot be read is said only where
// nvidia-smi shows there are GPUs to worry about.
std::optional<std::string> HealthChecks::check_gpu_errors() {
  if (auto problem = doctor::xid_problem(kernel_log_.read_new(), host_)) return problem;
  auto nvidia_smi = process::find_executable("nvidia-smi", environment_);
  if (!nvidia_smi) return std::nullopt;
  if (!kernel_log_.error().empty() && !said_no_kernel_log_ && say_)
    say_(fmt::format("dlaunch: health check 'gpu-errors' reads no Xid errors on {}: {} (kernel.dmesg_restrict "
                     "keeps the kernel log from users; ECC counts are still read)",
                     host_, kernel_log_.error()));
  said_no_kernel_log_ = true;
  std::vector<std::string> argv{*nvidia_smi};
  for (auto& argument : doctor::ecc_query()) argv.push_back(std::move(argument));
  auto result = run_tool(std::move(argv), environment_.to_entries(), settings_.gpu_timeout);
  // A failed or hung nvidia-smi was judged by check_gpu_memory already.
  if (result.timed_out || result.exit_code != 0) return std::nullopt;
  return doctor::ecc_problem(result.output, host_);
}

std::optional<std::string> HealthChecks::check_command(int round) const {
  if (!settings_.command) return std::nullopt;
  util::Environment environment = environment_;
  environment.set("DLAUNCH_HEALTH_CHECK_ROUND", std::to_string(round));
  auto result = run_tool({"/bin/sh", "-c", *settings_.command}, environment.to_entries(),
                         settings_.command_timeout);
  return command_problem(*settings_.command, result, settings_.command_timeout, settings_.output_lines, host_);
}

forensics::ToolResult HealthChecks::run_tool(std::vector<std::string> argv, std::vector<std::string> environment,
                                             std::chrono::milliseconds timeout) const {
  return run_bounded(std::move(argv), std::move(environment), timeout, keep_alive_);
}

// A wait that keeps the launcher's link alive meanwhile.
void HealthChecks::pause(std::chrono::milliseconds length) const {
  const auto until = std::chrono::steady_clock::now() + length;
  for (auto now = std::chrono::steady_clock::now(); now < until; now = std::chrono::steady_clock::now()) {
    if (keep_alive_) keep_alive_();
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(until - now,
                                                                               forensics::ToolRuns::kTickEvery));
  }
}

}  // namespace dlaunch::launch
