#include "jobs/submission_record.h"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>

#include "slurm/job_id.h"
#include "util/atomic_file.h"
#include "util/bounded_json.h"
#include "util/error.h"
#include "util/local_time.h"
#include "util/outside_file.h"
#include "util/strings.h"

namespace dlaunch::jobs {
namespace {

namespace fs = std::filesystem;

// dlaunch's records are some KiB; a sweep's sweep.json grows with its
// tasks (a few hundred bytes each, up to a few thousand tasks).
constexpr std::size_t kMaxJsonBytes = 4 << 20;
// "4294967294_4000000\n" and room to spare.
constexpr std::size_t kMaxJobIdFileBytes = 256;

// The job id in FOLDER/job_id; "" when there is none (a --srun run).
// Checked before anything uses it: a folder may be shared, or copied or
// damaged, and its id goes to scontrol, scancel and sacct.
std::string read_job_id(const std::string& folder) {
  const std::string path = folder + "/job_id";
  auto text = util::read_outside_file(path, {"the job id dlaunch submit wrote", kMaxJobIdFileBytes,
                                             util::Links::kRefuse});
  if (!text) return "";
  std::string id(util::trim(text->substr(0, text->find('\n'))));
  return slurm::checked_job_id(id, path);
}

// "20261203_140509" (or "20261203_140509_2") as "2026-12-03T14:05:09".
std::string iso_from_timestamp(const std::string& timestamp) {
  if (timestamp.size() < 15 || timestamp[8] != '_') return timestamp;
  return fmt::format("{}-{}-{}T{}:{}:{}", timestamp.substr(0, 4), timestamp.substr(4, 2), timestamp.substr(6, 2),
                     timestamp.substr(9, 2), timestamp.substr(11, 2), timestamp.substr(13, 2));
}

// A setting's value as config.json holds it ({"value": "4", "source": ...}).
std::string setting(const nlohmann::json& settings, const char* name) {
  auto found = settings.find(name);
  if (found == settings.end() || !found->is_object()) return "";
  return util::string_member(*found, "value");
}

int setting_int(const nlohmann::json& settings, const char* name, int fallback) {
  auto value = util::parse_int(setting(settings, name));
  return value && *value >= 0 && *value < (1 << 30) ? static_cast<int>(*value) : fallback;
}

std::vector<TaskRecord> read_tasks(const std::string& folder) {
  std::vector<TaskRecord> tasks;
  auto sweep = read_json_file(folder + "/sweep.json");
  if (!sweep || !sweep->contains("tasks") || !(*sweep)["tasks"].is_array()) return tasks;
  for (const auto& entry : (*sweep)["tasks"]) {
    if (!entry.is_object() || !entry.contains("index") || !entry["index"].is_number_integer()) continue;
    TaskRecord task;
    task.index = entry["index"].get<int>();
    std::string name = util::string_member(entry, "folder");
    if (name.empty()) name = fmt::format("task_{}", task.index);
    // Only a folder inside the submission's, whatever the file says.
    if (name.find('/') != std::string::npos || name == "..") continue;
    task.folder = folder + "/" + name;
    if (entry.contains("values") && entry["values"].is_object()) {
      for (const auto& [key, value] : entry["values"].items())
        task.values[key] = value.is_string() ? value.get<std::string>() : value.dump();
    }
    tasks.push_back(std::move(task));
  }
  std::sort(tasks.begin(), tasks.end(), [](const auto& a, const auto& b) { return a.index < b.index; });
  return tasks;
}

// The job's name as the job script gave it: --job-name, else the
// program's file name.
std::string job_name(const nlohmann::json& config, const nlohmann::json& settings) {
  std::string name = util::string_member(config, "job_name");
  if (name.empty()) name = setting(settings, "job-name");
  if (name.empty() && config.contains("command") && config["command"].is_array()) {
    for (const auto& word : config["command"]) {
      if (!word.is_string()) continue;
      std::string text = word.get<std::string>();
      if (text.ends_with(".py") || name.empty()) name = text.substr(text.find_last_of('/') + 1);
      if (text.ends_with(".py")) break;
    }
  }
  return name;
}

// The newest node record (attempt_K/node<N>.json) of the last attempt in
// RUN, and when it was written.
struct NodeRecordSeen {
  nlohmann::json document;
  fs::file_time_type written;
};

std::optional<NodeRecordSeen> newest_node_record(const std::string& run, const std::vector<int>& attempts) {
  if (attempts.empty()) return std::nullopt;
  std::optional<NodeRecordSeen> newest;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(fmt::format("{}/attempt_{}", run, attempts.back()), error)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with("node") || !name.ends_with(".json")) continue;
    auto written = fs::last_write_time(entry.path(), error);
    if (error || (newest && written <= newest->written)) continue;
    try {
      auto document = read_json_file(entry.path().string());
      newest = NodeRecordSeen{document ? *document : nlohmann::json(), written};
    } catch (const std::exception&) {
      // Unreadable: it says nothing about which run it was.
    }
  }
  return newest;
}

// Whether RESULT, RUN/result.json, is an earlier run's: the last attempt's
// node records name another incarnation of the job (a multi-node job names
// its own), or were written after it (a single node's name none).
bool of_an_earlier_run(const std::string& run, const nlohmann::json& result) {
  auto node = newest_node_record(run, numbered_folders(run, "attempt_"));
  if (!node) return false;
  const std::string result_job = util::string_member(result, "job");
  const std::string node_job = node->document.is_object() ? util::string_member(node->document, "job") : "";
  if (!result_job.empty() && !node_job.empty()) return result_job != node_job;
  std::error_code error;
  auto written = fs::last_write_time(run + "/result.json", error);
  return !error && node->written > written;
}

}  // namespace

std::optional<nlohmann::json> read_json_file(const std::string& path) {
  // dlaunch wrote these files: a symbolic link there was planted.
  return util::read_json_file(path, {"a JSON record dlaunch wrote", kMaxJsonBytes, util::Links::kRefuse});
}

SubmissionRecord read_submission(const std::string& folder) {
  SubmissionRecord record;
  record.folder = fs::absolute(folder).lexically_normal().string();
  if (record.folder.size() > 1 && record.folder.ends_with('/')) record.folder.pop_back();
  auto config = read_json_file(record.folder + "/config.json");
  if (!config || !config->is_object())
    throw util::InputError(fmt::format("{} is not a dlaunch submit folder: it has no config.json. Give a "
                                       "job id, a folder that dlaunch submit made, or 'last'",
                                       folder));
  record.settings = config->contains("settings") ? (*config)["settings"] : nlohmann::json::object();
  record.job_id = read_job_id(record.folder);
  record.name = job_name(*config, record.settings);
  record.submitted = iso_from_timestamp(util::string_member(*config, "timestamp"));
  record.nodes = setting_int(record.settings, "nodes", 1);
  record.gpus_per_node = setting_int(record.settings, "gpus-per-node", 1);
  // What the job got (with -G, not the gpus-per-node setting); older folders lack it.
  if (config->contains("nodes") && (*config)["nodes"].is_number_integer()) record.nodes = (*config)["nodes"].get<int>();
  if (config->contains("gpus_per_node") && (*config)["gpus_per_node"].is_number_integer())
    record.gpus_per_node = (*config)["gpus_per_node"].get<int>();
  if (config->contains("command") && (*config)["command"].is_array()) {
    for (const auto& word : (*config)["command"])
      if (word.is_string()) record.command.push_back(word.get<std::string>());
  }
  record.tasks = read_tasks(record.folder);
  record.never_submitted = read_never_submitted(record.folder);
  return record;
}

std::vector<SubmissionRecord> list_submissions(const std::vector<std::string>& output_dirs,
                                               std::vector<std::string>* left_out) {
  std::vector<SubmissionRecord> records;
  std::vector<std::string> seen;
  for (const auto& dir : output_dirs) {
    std::error_code error;
    for (const auto& entry : fs::directory_iterator(dir, error)) {
      if (!entry.is_directory(error) || !fs::exists(entry.path() / "config.json", error)) continue;
      std::string path = fs::absolute(entry.path()).lexically_normal().string();
      if (std::find(seen.begin(), seen.end(), path) != seen.end()) continue;
      seen.push_back(path);
      try {
        records.push_back(read_submission(path));
      } catch (const std::exception& unreadable) {
        // A folder cut short (a full disk), damaged or planted is left out
        // of the list, not the whole list.
        if (left_out != nullptr) left_out->push_back(unreadable.what());
      }
    }
  }
  // Folder names are timestamps (with _N for the same second): newest first.
  std::sort(records.begin(), records.end(), [](const auto& a, const auto& b) {
    std::string name_a = fs::path(a.folder).filename().string(), name_b = fs::path(b.folder).filename().string();
    if (name_a.size() != name_b.size() && name_a.substr(0, 15) == name_b.substr(0, 15))
      return name_a.size() > name_b.size();
    return name_a > name_b;
  });
  return records;
}

bool is_run_log_dir(const std::string& folder) {
  std::error_code error;
  if (fs::exists(fs::path(folder) / "config.json", error)) return false;
  return fs::exists(fs::path(folder) / "result.json", error) || !numbered_folders(folder, "attempt_").empty();
}

std::string logs_folder(const std::string& folder) {
  return is_run_log_dir(folder) ? folder : folder + "/logs";
}

std::vector<int> numbered_folders(const std::string& folder, const std::string& prefix) {
  constexpr std::int64_t kLimit = 1 << 20;
  std::vector<int> numbers;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(folder, error)) {
    std::string name = entry.path().filename().string();
    if (!name.starts_with(prefix)) continue;
    auto number = util::parse_int(name.substr(prefix.size()));
    if (number && *number >= 0 && *number < kLimit && entry.is_directory(error))
      numbers.push_back(static_cast<int>(*number));
  }
  std::sort(numbers.begin(), numbers.end());
  return numbers;
}

std::string last_run_folder(const std::string& folder) {
  std::string logs = logs_folder(folder);
  auto requeues = numbered_folders(logs, "requeue_");
  return requeues.empty() ? logs : fmt::format("{}/requeue_{}", logs, requeues.back());
}

std::optional<nlohmann::json> run_result(const std::string& folder) {
  try {
    const std::string run = last_run_folder(folder);
    auto result = read_json_file(run + "/result.json");
    if (result && result->is_object() && !of_an_earlier_run(run, *result)) return result;
  } catch (const std::exception&) {
    // Unreadable (cut short, planted, no permission): no result to show.
  }
  return std::nullopt;
}

std::optional<RunVerdict> run_verdict(const std::string& folder) {
  auto result = run_result(folder);
  if (!result) return std::nullopt;
  RunVerdict verdict;
  verdict.state = util::string_member(*result, "state");
  if (verdict.state.empty()) return std::nullopt;
  if (result->contains("exit_code") && (*result)["exit_code"].is_number_integer())
    verdict.exit_code = (*result)["exit_code"].get<int>();
  verdict.written_by = util::string_member(*result, "written_by");
  verdict.slurm_end = util::string_member(*result, "slurm_end");
  for (auto [key, lines] : {std::pair{"timeline", &verdict.timeline}, {"also_seen", &verdict.also_seen}}) {
    auto found = result->find(key);
    if (found == result->end() || !found->is_array()) continue;
    for (const auto& line : *found)
      if (line.is_string()) lines->push_back(line.get<std::string>());
  }
  return verdict;
}

std::optional<RecordedEnd> recorded_end(const std::string& folder) {
  std::optional<nlohmann::json> state;
  try {
    state = read_json_file(folder + "/state.json");
  } catch (const std::exception&) {
    // Unreadable: as if none was recorded; Slurm or result.json may say.
  }
  if (state && state->is_object() && !util::string_member(*state, "state").empty()) {
    RecordedEnd end;
    end.state = util::string_member(*state, "state");
    if (state->contains("exit_code") && (*state)["exit_code"].is_number_integer())
      end.exit_code = (*state)["exit_code"].get<int>();
    end.source = util::string_member(*state, "source");
    end.elapsed = util::string_member(*state, "elapsed");
    end.nodes = util::string_member(*state, "nodes");
    return end;
  }
  if (auto result = run_result(folder)) {
    RecordedEnd end;
    end.state = util::string_member(*result, "state");
    if (result->contains("exit_code") && (*result)["exit_code"].is_number_integer())
      end.exit_code = (*result)["exit_code"].get<int>();
    end.source = fmt::format("dlaunch run on node 0, at {}", util::string_member(*result, "ended"));
    if (!end.state.empty()) return end;
  }
  return std::nullopt;
}

std::string save_recorded_end(const std::string& folder, const RecordedEnd& end) {
  nlohmann::json document = {{"state", end.state}, {"source", end.source}, {"elapsed", end.elapsed},
                             {"nodes", end.nodes}, {"recorded", util::local_time_now()}};
  if (end.exit_code) document["exit_code"] = *end.exit_code;
  try {
    util::write_file_atomically(folder + "/state.json", document.dump(2) + "\n");
    return "";
  } catch (const std::exception& error) {
    return error.what();
  }
}

}  // namespace dlaunch::jobs
