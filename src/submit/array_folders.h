// The folders of a job array's tasks inside its submission folder, and the
// files that describe the array to `dlaunch jobs`, `status`, `logs` and
// `cancel`:
//
//   <submission>/sweep.json       {"array_job_id": "12" (null until sbatch
//                                 answered), "max_parallel": 2 or null,
//                                 "tasks": [{"index": 0, "values": {"lr":
//                                 "0.1", "bs": "32"}, "args": ["--lr=0.1",
//                                 "--bs=32"], "folder": "task_0"}, ...]}
//   <submission>/task_<i>/        made before sbatch (Slurm does not make
//                                 --output's folder), holding
//       config.json               {"index": i, "values": {...}, "args": [...]}
//       slurm-<array id>_<i>.log  the task's Slurm log
//       logs/                     its workers' logs (logs/requeue_N/ after requeues)
//       exit_code                 its dlaunch verdict, when the job outlives a node
//
// A raw --array's tasks have empty values and args.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "submit/job_array.h"

namespace dlaunch::submit {

inline constexpr const char* kSweepFileName = "sweep.json";

// sweep.json's document; "array_job_id" is null without ARRAY_JOB_ID.
nlohmann::ordered_json sweep_json(const JobArray& array, const std::optional<std::string>& array_job_id);

// A task's config.json document.
nlohmann::ordered_json task_config_json(const SweepTask& task);

// The Slurm log of task INDEX of array ARRAY_JOB_ID in SUBMISSION_DIR (what
// #SBATCH --output names).
std::string task_log_path(const std::string& submission_dir, const std::string& array_job_id,
                          std::int64_t index);

// Makes every task's folder with its config.json, and sweep.json without
// the array's job id. Throws SystemError naming the file or folder.
void create_task_folders(const std::string& submission_dir, const JobArray& array);

// Rewrites sweep.json with ARRAY_JOB_ID, once sbatch answered.
void record_array_job_id(const std::string& submission_dir, const JobArray& array,
                         const std::string& array_job_id);

}  // namespace dlaunch::submit
