// Following a job array (`dlaunch submit --wait` of a --sweep or an
// --array): every task's state, one line per task, until every task ended;
// then a table and the failed tasks named.
//
// The lines, the table and the verdict are pure (unit-tested); only
// follow_array() asks Slurm and prints.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "slurm/job_info.h"
#include "submit/job_array.h"

namespace dlaunch::jobs {

struct TaskStatus {
  std::string state;             // JobState; "" until Slurm showed the task
  std::string reason;            // Slurm's reason, while pending
  long long seconds = 0;         // pending: waited so far; else its RunTime
  bool ended = false;
  std::optional<int> exit_code;  // once ended; nullopt when Slurm forgot the task before
                                 // dlaunch saw its end
};

// The state of each task that Slurm's RECORDS (`scontrol show job -o
// ARRAY_ID`) show, by index. One record of pending tasks
// (ArrayTaskId=2-3, ArrayTaskId=4-7%2) stands for each of them. Records
// without a readable ArrayTaskId are skipped. An ended task's exit code is
// ExitCode's (128+N when killed by signal N), and 1 when it ended other
// than COMPLETED with 0.
std::map<std::int64_t, TaskStatus> task_statuses(const std::vector<slurm::JobInfo>& records);

// "task 2 (lr=0.01 bs=32)", or "task 2" without values.
std::string task_label(const submit::SweepTask& task);

// The task's live line: "task 2 (lr=0.01 bs=32): RUNNING, 14 s", "...:
// PENDING (Priority), 3 s", "...: FAILED with exit code 3".
std::string task_line(const submit::SweepTask& task, const TaskStatus& status);

// The table shown at the end: task, values, state, exit code, folder.
std::string array_table(const submit::JobArray& array, const std::vector<TaskStatus>& statuses,
                        const std::string& submission_dir);

// One line per task that did not complete with 0: "task 3 (lr=0.01 bs=64)
// FAILED with exit code 3; log: <submission>/task_3/slurm-12_3.log".
std::vector<std::string> failed_task_lines(const submit::JobArray& array, const std::vector<TaskStatus>& statuses,
                                           const std::string& submission_dir, const std::string& array_job_id);

// 0 when every task COMPLETED with exit code 0; else the first failed
// task's exit code, or 1 when that is unknown or 0.
int array_exit_code(const std::vector<TaskStatus>& statuses);

// Waits until every task of ARRAY's job ARRAY_JOB_ID ended, asking scontrol
// every POLL_INTERVAL (Slurm has no event interface) and showing one line
// per task on stderr: redrawn in place on a terminal, a line per change
// otherwise. A task Slurm no longer shows (MinJobAge passed) before its end
// was seen ends with an unknown exit code. Returns the statuses in ARRAY's
// task order. Throws SystemError when scontrol fails otherwise.
std::vector<TaskStatus> follow_array(const std::string& array_job_id, const submit::JobArray& array,
                                     std::chrono::milliseconds poll_interval = std::chrono::milliseconds(1000));

}  // namespace dlaunch::jobs
