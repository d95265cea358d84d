// The workers of a run's log folder alive on this host, read from /proc.
#include "jobs/live_workers.h"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>

#include "util/outside_file.h"
#include "util/strings.h"

namespace dlaunch::jobs {
namespace {

namespace fs = std::filesystem;

// A worker's environment is some KiB; a process with a huge one is cut,
// and its marker then looked for in what was read.
constexpr std::size_t kMaxEnvironBytes = 1 << 20;
constexpr std::size_t kMaxStatBytes = 4096;

// The /proc file of PID named NAME, or "" when it cannot be read (gone,
// another user's, hidden).
std::string proc_file(const std::string& proc, pid_t pid, const char* name, std::size_t max_bytes) {
  try {
    return util::read_outside_file_start(fmt::format("{}/{}/{}", proc, pid, name),
                                         {"a /proc file", max_bytes, util::Links::kRefuse});
  } catch (const std::exception&) {
    return "";
  }
}

// The value of NAME in ENVIRON (NAME=VALUE entries, each ended by a NUL).
std::optional<std::string> environ_value(const std::string& environ, std::string_view name) {
  const std::string prefix = fmt::format("{}=", name);
  for (const auto& entry : util::split(environ, '\0'))
    if (entry.starts_with(prefix)) return entry.substr(prefix.size());
  return std::nullopt;
}

int environ_int(const std::string& environ, std::string_view name) {
  auto value = environ_value(environ, name);
  auto number = value ? util::parse_int(*value) : std::nullopt;
  return number && *number >= 0 && *number < (1 << 30) ? static_cast<int>(*number) : -1;
}

// The fields of /proc/PID/stat after the command's name, which may hold
// spaces and parentheses itself: field 3 (state) is the first.
std::vector<std::string> stat_fields(const std::string& stat) {
  auto close = stat.rfind(')');
  if (close == std::string::npos) return {};
  std::vector<std::string> fields;
  for (const auto& field : util::split(util::trim(stat.substr(close + 1)), ' '))
    if (!field.empty()) fields.push_back(field);
  return fields;
}

struct ProcessState {
  ProcessIdentity identity;
  pid_t parent = 0;
};

std::optional<ProcessState> state_of(pid_t pid, const std::string& proc) {
  auto fields = stat_fields(proc_file(proc, pid, "stat", kMaxStatBytes));
  // state ppid ... starttime is field 22 of stat(5), the 20th after the name.
  if (fields.size() < 20) return std::nullopt;
  auto parent = util::parse_int(fields[1]);
  auto start = util::parse_int(fields[19]);
  if (!parent || !start || *start < 0) return std::nullopt;
  return ProcessState{{pid, static_cast<unsigned long long>(*start)}, static_cast<pid_t>(*parent)};
}

// Where the worker's error file says it belongs: its attempt and rank in
// LOG_DIR, from LOG_DIR/attempt_K/rankR/error.json.
struct Place {
  int attempt = -1;
  int rank = -1;
};

std::optional<int> numbered(const std::string& name, std::string_view prefix) {
  if (!name.starts_with(prefix)) return std::nullopt;
  auto number = util::parse_int(name.substr(prefix.size()));
  if (!number || *number < 0 || *number >= (1 << 30)) return std::nullopt;
  return static_cast<int>(*number);
}

std::optional<Place> place_in(const std::string& error_file, const std::string& log_dir) {
  fs::path path(error_file);
  if (path.filename() != "error.json") return std::nullopt;
  fs::path rank_folder = path.parent_path(), attempt_folder = rank_folder.parent_path();
  auto rank = numbered(rank_folder.filename().string(), "rank");
  auto attempt = numbered(attempt_folder.filename().string(), "attempt_");
  std::error_code error;
  // The same folder, however either was spelled (relative, through a link).
  if (!rank || !attempt || !fs::equivalent(attempt_folder.parent_path(), log_dir, error) || error)
    return std::nullopt;
  return Place{*attempt, *rank};
}

std::string environ_of(pid_t pid, const std::string& proc) {
  return proc_file(proc, pid, "environ", kMaxEnvironBytes);
}

std::optional<Place> worker_place(const std::string& environ, const std::string& log_dir) {
  auto error_file = environ_value(environ, "TORCHELASTIC_ERROR_FILE");
  return error_file ? place_in(*error_file, log_dir) : std::nullopt;
}

std::vector<pid_t> all_pids(const std::string& proc) {
  std::vector<pid_t> pids;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(proc, error)) {
    auto pid = util::parse_int(entry.path().filename().string());
    if (pid && *pid > 0 && *pid < (1LL << 31)) pids.push_back(static_cast<pid_t>(*pid));
  }
  return pids;
}

std::string ranges_text(std::vector<int> numbers) {
  std::sort(numbers.begin(), numbers.end());
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < numbers.size();) {
    std::size_t j = i;
    while (j + 1 < numbers.size() && numbers[j + 1] == numbers[j] + 1) ++j;
    parts.push_back(i == j ? std::to_string(numbers[i]) : fmt::format("{}-{}", numbers[i], numbers[j]));
    i = j + 1;
  }
  return util::join(parts, ",");
}

}  // namespace

std::vector<LiveWorker> find_live_workers(const std::string& log_dir, const std::string& proc) {
  std::vector<LiveWorker> workers;
  std::error_code error;
  if (!fs::is_directory(log_dir, error)) return workers;
  for (pid_t pid : all_pids(proc)) {
    const std::string environ = environ_of(pid, proc);
    auto place = worker_place(environ, log_dir);
    if (!place) continue;
    auto state = state_of(pid, proc);
    if (!state) continue;
    // A worker's child inherits its environment: only the worker counts.
    if (worker_place(environ_of(state->parent, proc), log_dir)) continue;
    auto launcher = state_of(state->parent, proc);
    // The kernel's name of the program, cut to 15 characters: "dlaunch".
    const bool dlaunch = proc_file(proc, state->parent, "comm", kMaxStatBytes).starts_with("dlaunch");
    workers.push_back({pid, place->rank, environ_int(environ, "LOCAL_RANK"), environ_int(environ, "GROUP_RANK"),
                       place->attempt, launcher ? launcher->identity : ProcessIdentity{state->parent, 0}, dlaunch});
  }
  std::sort(workers.begin(), workers.end(), [](const auto& a, const auto& b) { return a.rank < b.rank; });
  return workers;
}

std::optional<ProcessIdentity> identity_of(pid_t pid, const std::string& proc) {
  auto state = state_of(pid, proc);
  if (!state) return std::nullopt;
  return state->identity;
}

bool still_running(const ProcessIdentity& process, const std::string& proc) {
  auto now = identity_of(process.pid, proc);
  return now && (process.start_time == 0 || now->start_time == process.start_time);
}

bool launcher_gone(const std::vector<LiveWorker>& workers) {
  return !workers.empty() &&
         std::none_of(workers.begin(), workers.end(), [](const auto& worker) { return worker.launcher_alive; });
}

std::string describe_live_workers(const std::vector<LiveWorker>& workers) {
  std::vector<int> ranks, attempts;
  std::vector<std::string> pids, launchers;
  for (const auto& worker : workers) {
    ranks.push_back(worker.rank);
    pids.push_back(std::to_string(worker.pid));
    if (std::find(attempts.begin(), attempts.end(), worker.attempt) == attempts.end())
      attempts.push_back(worker.attempt);
    std::string launcher = std::to_string(worker.launcher.pid);
    if (std::find(launchers.begin(), launchers.end(), launcher) == launchers.end()) launchers.push_back(launcher);
  }
  std::string parent = launcher_gone(workers)
                           ? fmt::format("left to pid {}, their launcher gone", util::join(launchers, ", "))
                           : fmt::format("launcher pid {}", util::join(launchers, ", "));
  return fmt::format("rank{} {} of attempt {} (pid{} {}), {}", ranks.size() == 1 ? "" : "s", ranges_text(ranks),
                     ranges_text(attempts), pids.size() == 1 ? "" : "s", util::join(pids, ", "), parent);
}

}  // namespace dlaunch::jobs
