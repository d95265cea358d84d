// A --log-dir of dlaunch run or dlaunch ssh read back as a job.
#include "jobs/run_folder.h"

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fmt/chrono.h>
#include <fmt/format.h>
#include <sys/stat.h>

#include "util/bounded_json.h"
#include "util/strings.h"

namespace dlaunch::jobs {
namespace {

namespace fs = std::filesystem;

// When PATH was last written, in seconds since the epoch; nullopt when it
// is not there.
std::optional<std::time_t> modified(const fs::path& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return std::nullopt;
  return info.st_mtime;
}

std::string local_time(std::time_t time) { return fmt::format("{:%Y-%m-%dT%H:%M:%S}", fmt::localtime(time)); }

// The node records of the last attempt in FOLDER, by node rank.
std::vector<nlohmann::json> last_node_records(const std::string& folder) {
  std::vector<nlohmann::json> records;
  auto attempts = numbered_folders(folder, "attempt_");
  if (attempts.empty()) return records;
  const std::string attempt = fmt::format("{}/attempt_{}", folder, attempts.back());
  for (int node = 0; node < (1 << 16); ++node) {
    std::optional<nlohmann::json> record;
    try {
      record = read_json_file(fmt::format("{}/node{}.json", attempt, node));
    } catch (const std::exception&) {
      record = nlohmann::json();  // damaged: counted, not read
    }
    if (!record) break;
    records.push_back(*record);
  }
  return records;
}

int workers_of(const nlohmann::json& node_record) {
  auto ranks = node_record.is_object() ? node_record.find("ranks") : node_record.end();
  return ranks != node_record.end() && ranks->is_array() ? static_cast<int>(ranks->size()) : 0;
}

// When the newest rank log of the last attempt in FOLDER was written.
std::optional<std::time_t> logs_last_written(const std::string& folder) {
  auto attempts = numbered_folders(folder, "attempt_");
  if (attempts.empty()) return std::nullopt;
  std::optional<std::time_t> newest;
  const std::string attempt = fmt::format("{}/attempt_{}", folder, attempts.back());
  for (int rank : numbered_folders(attempt, "rank"))
    for (const char* name : {"stdout.log", "stderr.log"})
      if (auto time = modified(fmt::format("{}/rank{}/{}", attempt, rank, name)); time && (!newest || *time > *newest))
        newest = time;
  return newest;
}

std::string unknown_reason(const std::string& folder) {
  auto written = logs_last_written(folder);
  std::string last = written ? fmt::format("; its logs were last written at {} ({} s ago)", local_time(*written),
                                           std::max<long long>(0, std::time(nullptr) - *written))
                             : "";
  return fmt::format("no result.json yet, and no worker of this folder runs on this host: the run is starting or "
                     "between two attempts, runs on another host (each host of a multi-node run has its own "
                     "--log-dir: look on node 0's), or its launcher was killed before it could write a result{}",
                     last);
}

}  // namespace

SubmissionRecord read_run_folder(const std::string& folder) {
  SubmissionRecord record;
  record.folder = fs::absolute(folder).lexically_normal().string();
  if (record.folder.size() > 1 && record.folder.ends_with('/')) record.folder.pop_back();
  record.run_log_dir = true;
  record.name = fs::path(record.folder).filename().string();
  auto nodes = last_node_records(record.folder);
  record.nodes = std::max<int>(1, static_cast<int>(nodes.size()));
  record.gpus_per_node = nodes.empty() ? 0 : workers_of(nodes.front());
  if (auto result = run_result(record.folder)) record.submitted = util::string_member(*result, "started");
  if (record.submitted.empty())
    if (auto made = modified(record.folder + "/attempt_0")) record.submitted = local_time(*made);
  return record;
}

JobStatus run_status(const SubmissionRecord& record, const std::vector<LiveWorker>& live) {
  JobStatus status = job_status(record, {}, {});
  if (auto result = run_result(record.folder)) {
    status.source = fmt::format("result.json, written by dlaunch run on {} at {}", util::string_member(*result, "written_by"),
                                util::string_member(*result, "ended"));
    return status;
  }
  status.elapsed.clear();
  if (launcher_gone(live)) {
    status.state = "UNKNOWN";
    status.source = fmt::format("no result.json, and the launcher is gone while workers still run on this host: "
                                "{}; nothing writes their logs any more. Stop them with kill",
                                describe_live_workers(live));
    return status;
  }
  if (!live.empty()) {
    status.state = "RUNNING";
    status.source = fmt::format("its workers run on this host: {}", describe_live_workers(live));
    return status;
  }
  status.state = "UNKNOWN";
  status.source = unknown_reason(record.folder);
  return status;
}

RunEndWatch::RunEndWatch(std::string folder, std::string proc) : folder_(std::move(folder)), proc_(std::move(proc)) {}

bool RunEndWatch::ended(std::string* note) {
  if (run_result(folder_)) return true;
  auto live = find_live_workers(folder_, proc_);
  if (launcher_gone(live)) {
    if (note != nullptr) *note = fmt::format("the launcher of {} is gone: {}", folder_, describe_live_workers(live));
    return true;
  }
  if (!live.empty()) {
    launcher_ = live.front().launcher;
    return false;
  }
  if (launcher_ && !still_running(*launcher_, proc_)) {
    // The result is written before the launcher exits: one more look.
    if (run_result(folder_)) return true;
    if (note != nullptr)
      *note = fmt::format("the launcher of {} (pid {}) is gone without writing a result.json: it was killed, or "
                          "its folder could not be written",
                          folder_, launcher_->pid);
    return true;
  }
  if (!launcher_ && !noted_ && note != nullptr) {
    *note = fmt::format("no worker of {} runs on this host and the run has no result.json yet: following until it "
                        "has one (Ctrl-C stops following)",
                        folder_);
    noted_ = true;
  }
  return false;
}

std::vector<std::string> saved_stack_reports(const std::string& folder) {
  std::vector<std::pair<std::time_t, std::string>> reports;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(fs::path(folder) / "stacks", error)) {
    if (entry.path().extension() != ".txt" || !entry.is_regular_file(error)) continue;
    reports.emplace_back(modified(entry.path()).value_or(0), entry.path().string());
  }
  std::sort(reports.begin(), reports.end());
  std::vector<std::string> paths;
  for (auto& [time, path] : reports) paths.push_back(std::move(path));
  return paths;
}

std::optional<std::string> run_ending(const std::string& folder) {
  auto result = run_result(folder);
  if (!result) return std::nullopt;
  auto code = result->find("exit_code");
  std::string with_code =
      code != result->end() && code->is_number_integer() ? fmt::format(" with exit code {}", code->get<int>()) : "";
  std::string state = util::string_member(*result, "state");
  return fmt::format("{}{} at {}", state.empty() ? "ended" : state, with_code, util::string_member(*result, "ended"));
}

}  // namespace dlaunch::jobs
