// Finding a submitted job from what the user types after `dlaunch status`,
// `logs`, `cancel` or `stacks`: a Slurm job id ("12", or "12_3" for one
// task of an array), a submission folder (or one task's folder), a --log-dir
// of dlaunch run or dlaunch ssh (run_folder.h), or "last".
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "jobs/submission_record.h"
#include "util/environment.h"

namespace dlaunch::jobs {

// Where submission folders are looked for: OUTPUT_DIR when given; else
// the built-in slurm-outputs, the config file's [defaults] output-dir and
// each profile's (as dlaunch submit would make them from here).
std::vector<std::string> submission_dirs(const std::optional<std::string>& output_dir,
                                         const util::Environment& environment);

// The folder where Slurm writes JOB_ID's log (its StdOut's folder): for a
// dlaunch submit job, its submission (or task) folder. nullopt when Slurm
// no longer knows the job; SystemError when scontrol cannot answer.
std::optional<std::string> slurm_job_folder(const std::string& job_id);

struct FoundJob {
  SubmissionRecord record;
  std::optional<int> task;  // "12_3", or a task folder: that task alone
};

// Throws InputError naming JOB and what was tried when it finds nothing;
// slurm::NotConfigured for a job id no folder in DIRS knows when Slurm is
// not configured on this machine, saying both.
FoundJob find_job(const std::string& job, const std::vector<std::string>& dirs);

}  // namespace dlaunch::jobs
