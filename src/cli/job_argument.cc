#include "cli/job_argument.h"

#include <filesystem>
#include <fmt/format.h>
#include <optional>
#include <system_error>

#include "slurm/job_id.h"
#include "util/environment.h"
#include "util/error.h"

namespace dlaunch::cli {

void add_job_argument(CLI::App& app, std::string& job, std::string& output_dir) {
  app.add_option("job", job,
                 "A Slurm job id (12, or 12_3 for one task of an array), a submission folder, a --log-dir of "
                 "dlaunch run or dlaunch ssh, or 'last'")
      ->required()
      ->type_name("JOB");
  add_output_dir_option(app, output_dir);
}

void add_output_dir_option(CLI::App& app, std::string& output_dir) {
  app.add_option("--output-dir", output_dir,
                 "Look for submissions only here (default: slurm-outputs and the output-dir of dlaunch.toml's "
                 "[defaults] and profiles)")
      ->group("Where")
      ->type_name("DIR");
}

std::vector<std::string> submission_dirs_for(const std::string& output_dir, bool missing_is_a_typo) {
  std::optional<std::string> dir;
  if (!output_dir.empty()) dir = output_dir;
  // A folder named by hand that is not there is a typo, not "no jobs".
  std::error_code ignored;
  if (dir && missing_is_a_typo && !std::filesystem::is_directory(*dir, ignored))
    throw util::UsageError(fmt::format("--output-dir {}: there is no such folder; give the folder dlaunch submit "
                                       "wrote to (its --output-dir, by default slurm-outputs)",
                                       *dir));
  return jobs::submission_dirs(dir, util::Environment::from_process());
}

jobs::FoundJob find_job_argument(const std::string& job, const std::string& output_dir) {
  // Slurm may know a job id that no folder here does: asking it is worth
  // more than a refusal of the folder (find_job says that none knows it).
  return jobs::find_job(job, submission_dirs_for(output_dir, !slurm::is_job_id(job)));
}

}  // namespace dlaunch::cli
