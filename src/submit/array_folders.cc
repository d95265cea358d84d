#include "submit/array_folders.h"

#include <cerrno>
#include <fmt/format.h>
#include <sys/stat.h>

#include "util/atomic_file.h"
#include "util/error.h"

namespace dlaunch::submit {
namespace {

nlohmann::ordered_json values_json(const SweepTask& task) {
  nlohmann::ordered_json values = nlohmann::ordered_json::object();
  for (const auto& [name, value] : task.values) values[name] = value;
  return values;
}

// Written aside and renamed into place, so `dlaunch jobs` reading it at
// the same time sees the old or the new document, never half of one.
void write_json(const std::string& path, const nlohmann::ordered_json& document) {
  util::write_file_atomically(path, document.dump(2) + "\n");
}

}  // namespace

nlohmann::ordered_json sweep_json(const JobArray& array, const std::optional<std::string>& array_job_id) {
  nlohmann::ordered_json document;
  document["array_job_id"] = array_job_id ? nlohmann::ordered_json(*array_job_id) : nlohmann::ordered_json();
  document["max_parallel"] = array.max_parallel ? nlohmann::ordered_json(*array.max_parallel) : nlohmann::ordered_json();
  document["tasks"] = nlohmann::ordered_json::array();
  for (const SweepTask& task : array.tasks) {
    document["tasks"].push_back({{"index", task.index},
                                 {"values", values_json(task)},
                                 {"args", task.args},
                                 {"folder", task_folder_name(task.index)}});
  }
  return document;
}

nlohmann::ordered_json task_config_json(const SweepTask& task) {
  return {{"index", task.index}, {"values", values_json(task)}, {"args", task.args}};
}

std::string task_log_path(const std::string& submission_dir, const std::string& array_job_id,
                          std::int64_t index) {
  return fmt::format("{}/{}/slurm-{}_{}.log", submission_dir, task_folder_name(index), array_job_id, index);
}

void create_task_folders(const std::string& submission_dir, const JobArray& array) {
  for (const SweepTask& task : array.tasks) {
    std::string folder = submission_dir + "/" + task_folder_name(task.index);
    if (::mkdir(folder.c_str(), 0755) != 0)
      throw util::system_error(fmt::format("cannot create the task folder {}", folder), errno);
    write_json(folder + "/config.json", task_config_json(task));
  }
  write_json(submission_dir + "/" + kSweepFileName, sweep_json(array, std::nullopt));
}

void record_array_job_id(const std::string& submission_dir, const JobArray& array,
                         const std::string& array_job_id) {
  write_json(submission_dir + "/" + kSweepFileName, sweep_json(array, array_job_id));
}

}  // namespace dlaunch::submit
