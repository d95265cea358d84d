// A submission that is a Slurm job array: from --sweep (one task per
// combination of values) or from a raw --sbatch-arg=--array=SPEC (tasks
// without values). Either way every task gets its own folder,
// <submission>/task_<index>/, with its Slurm log, worker logs, config.json
// and exit code, so no task overwrites another's.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "submit/submit_settings.h"
#include "submit/sweep.h"

namespace dlaunch::submit {

struct JobArray {
  std::string spec;                  // #SBATCH --array=SPEC ("0-3%2")
  std::optional<int> max_parallel;   // %P: at most this many tasks run at once
  std::vector<SweepTask> tasks;      // in index order
  bool swept = false;                // values from --sweep: the script picks each task's arguments
};

// The folder of task INDEX inside the submission folder: "task_3".
std::string task_folder_name(std::int64_t index);

// The array SETTINGS ask for, if any: --sweep (with --max-parallel), or an
// --array option among SBATCH_ARGS (--array=SPEC, --array SPEC, -a SPEC,
// -aSPEC, or sbatch's abbreviations of --array), which is taken out of
// SBATCH_ARGS since the script writes its own #SBATCH --array. Throws
// InputError naming the setting and its source for a bad sweep or SPEC,
// both at once, more than kMaxArrayTasks tasks, --max-parallel without an
// array or beside a SPEC's own %P, and an array with --srun (srun runs one
// step; Slurm makes arrays of batch jobs only).
std::optional<JobArray> job_array_of(const SubmitSettings& settings, std::vector<std::string>& sbatch_args);

}  // namespace dlaunch::submit
