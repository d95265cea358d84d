#include "jobs/job_lookup.h"

#include <filesystem>
#include <fmt/format.h>

#include "jobs/run_folder.h"
#include "slurm/job_id.h"
#include "slurm/job_query.h"
#include "slurm/slurm_command.h"
#include "submit/config_file.h"
#include "util/error.h"
#include "util/strings.h"

namespace dlaunch::jobs {
namespace {

namespace fs = std::filesystem;

constexpr const char* kDefaultOutputDir = "slurm-outputs";

void add_unique(std::vector<std::string>& dirs, const std::string& dir) {
  if (dir.empty()) return;
  std::string absolute = fs::absolute(dir).lexically_normal().string();
  for (const auto& known : dirs)
    if (known == absolute) return;
  dirs.push_back(absolute);
}

// A task folder (<submission>/task_3) as its submission and task.
std::optional<FoundJob> from_folder(const std::string& folder) {
  fs::path path = fs::absolute(folder).lexically_normal();
  if (path.filename().empty()) path = path.parent_path();
  std::string name = path.filename().string();
  if (name.starts_with("task_") && fs::exists(path.parent_path() / "config.json")) {
    auto index = util::parse_int(name.substr(5));
    if (index) return FoundJob{read_submission(path.parent_path().string()), static_cast<int>(*index)};
  }
  if (is_run_log_dir(path.string())) return FoundJob{read_run_folder(path.string()), std::nullopt};
  if (!fs::exists(path / "config.json")) return std::nullopt;
  return FoundJob{read_submission(path.string()), std::nullopt};
}

// slurm_job_folder(), saying when Slurm is not configured here that no
// folder in DIRS knows JOB either: the user learns both why Slurm was not
// asked and that the folders were.
std::optional<std::string> folder_from_slurm(const std::string& job, const std::vector<std::string>& dirs) {
  try {
    return slurm_job_folder(job);
  } catch (const slurm::NotConfigured& unconfigured) {
    throw slurm::NotConfigured(fmt::format("{}. No submission folder in {} knows job {} either: if dlaunch submit "
                                           "made it elsewhere, give --output-dir or the submission folder",
                                           unconfigured.what(), util::join(dirs, ", "), job));
  }
}

FoundJob by_job_id(const std::string& job, const std::vector<std::string>& dirs) {
  auto parts = util::split(job, '_');
  std::optional<int> task;
  if (parts.size() == 2) task = static_cast<int>(*util::parse_int(parts[1]));
  for (const auto& record : list_submissions(dirs)) {
    if (record.job_id == parts[0]) return FoundJob{record, task};
  }
  if (auto folder = folder_from_slurm(job, dirs)) {
    if (auto found = from_folder(*folder)) {
      if (task) found->task = task;
      return *found;
    }
  }
  throw util::InputError(fmt::format("no submission of job {} in {} (and Slurm shows no dlaunch submit "
                                     "folder for it). Run the command where you ran dlaunch submit, give "
                                     "--output-dir, or give the submission folder",
                                     job, util::join(dirs, ", ")));
}

}  // namespace

std::optional<std::string> slurm_job_folder(const std::string& job_id) {
  for (const auto& info : slurm::show_job(job_id)) {
    std::string out = info.field("StdOut");
    if (!out.empty()) return fs::path(out).parent_path().string();
  }
  return std::nullopt;
}

std::vector<std::string> submission_dirs(const std::optional<std::string>& output_dir,
                                         const util::Environment& environment) {
  std::vector<std::string> dirs;
  if (output_dir) {
    add_unique(dirs, *output_dir);
    return dirs;
  }
  add_unique(dirs, kDefaultOutputDir);
  auto file = submit::find_config_file(environment);
  if (!file) return dirs;
  submit::SubmitSettings defaults;
  submit::apply_config_file(defaults, *file, std::nullopt);
  if (auto dir = defaults.string("output-dir")) add_unique(dirs, *dir);
  for (const auto& profile : submit::config_profile_names(*file)) {
    submit::SubmitSettings settings;
    submit::apply_config_file(settings, *file, profile);
    if (auto dir = settings.string("output-dir")) add_unique(dirs, *dir);
  }
  return dirs;
}

FoundJob find_job(const std::string& job, const std::vector<std::string>& dirs) {
  if (job == "last") {
    auto records = list_submissions(dirs);
    if (records.empty())
      throw util::InputError(fmt::format("'last': no submission folder in {}. Run the command where you ran "
                                         "dlaunch submit, or give --output-dir",
                                         util::join(dirs, ", ")));
    return FoundJob{records.front(), std::nullopt};
  }
  std::error_code error;
  if (fs::is_directory(job, error)) {
    if (auto found = from_folder(job)) return *found;
    throw util::InputError(fmt::format("{} is neither a dlaunch submit folder (no config.json in it) nor a "
                                       "run's --log-dir (no attempt_N/ or result.json in it: a run writes "
                                       "them once its workers start). Give a job id, a folder that dlaunch "
                                       "submit made, a --log-dir of dlaunch run or dlaunch ssh, or 'last'",
                                       job));
  }
  if (slurm::is_job_id(job)) return by_job_id(job, dirs);
  throw util::InputError(fmt::format("'{}' is neither a job id (12, or 12_3 for a task), a folder, nor "
                                     "'last'. Give one of those; 'dlaunch jobs' lists your submissions",
                                     job));
}

}  // namespace dlaunch::jobs
