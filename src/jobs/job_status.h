// The state of a submitted job as `dlaunch jobs`, `status` and `cancel`
// report it: live from Slurm while Slurm knows the job, else from sacct
// (where the cluster keeps accounting), else from what was recorded in the
// submission folder (submission_record.h), else unknown.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "jobs/submission_record.h"
#include "slurm/job_info.h"

namespace dlaunch::jobs {

struct ArrayTask {
  int index = 0;
  std::string id;  // "12_3"
  std::string state;
  std::string reason;
  std::optional<int> exit_code;
  std::string elapsed;
  std::string folder;
  std::map<std::string, std::string> values;
};

struct JobStatus {
  std::string state = "UNKNOWN";
  // What Slurm (or sacct) itself shows, when it differs from STATE: dlaunch
  // cancelled the job after its verdict (its batch host was lost).
  std::string slurm_state;
  std::optional<int> slurm_exit_code;
  std::string reason;         // Slurm's, when it gives one ("Priority"); never "None"
  std::string source;         // "Slurm", "sacct", or what recorded it
  bool slurm_answered = true;  // false: scontrol failed (no Slurm here, or its controller is down)
  std::optional<int> exit_code;
  std::string elapsed;        // "01:05"
  std::string time_limit;     // "1-00:00:00", "UNLIMITED"
  std::string node_list;      // "node[1-3]"
  int requeues = 0;           // Slurm's Restarts
  int restarts = 0;           // dlaunch run's restarts (rounds after the first)
  std::string failure;        // one line, from dlaunch run's result
  std::string failure_summary;  // the block node 0 printed
  // The doctor's reading of the root failure (result.json's "root": rank,
  // kind, exception, file and line, traceback, consequences); null when
  // the job did not fail or its launcher predates it.
  nlohmann::json root;
  // dlaunch run's verdict (result.json), in as soon as the job is decided:
  // while Slurm still shows the job running or completing (a node that
  // froze), and when dlaunch had to cancel the job itself (its batch host
  // lost), it is the job's true end. Its timeline names every node lost,
  // how, and who took its place.
  std::optional<RunVerdict> verdict;
  std::vector<ArrayTask> tasks;
};

// sacct's final state of JOB_ID (an array's tasks as "12_3"), where the
// cluster keeps accounting; empty where it does not.
std::vector<ArrayTask> query_sacct(const std::string& job_id);

// Parses `sacct -X -n -P -o JobID,State,ExitCode,Elapsed,NodeList` output.
std::vector<ArrayTask> parse_sacct(const std::string& output);

// The status of RECORD given what Slurm showed (RECORDS, maybe empty) and
// what sacct showed (ACCOUNTED, maybe empty). Pure: reads the folder's
// records only.
JobStatus job_status(const SubmissionRecord& record, const std::vector<slurm::JobInfo>& records,
                     const std::vector<ArrayTask>& accounted);

// Asks Slurm (and sacct when Slurm forgot the job), then job_status(). A
// final state seen from Slurm is recorded in the folder (state.json), so
// that it is still known once Slurm forgets the job. A run's --log-dir
// (RECORD.run_log_dir) is read alone, with what runs on this host
// (run_folder.h).
JobStatus current_status(const SubmissionRecord& record);

// Whether the job (STATUS, or its task TASK) has ended for sure: a final
// state, never submitted (NOT-SUBMITTED), or Slurm answered that it no
// longer knows it. A controller that
// does not answer says nothing about the job.
bool has_ended(const JobStatus& status, std::optional<int> task = std::nullopt);

// "RUNNING", "FAILED (exit 3)", "PENDING (Priority)", "2 COMPLETED, 1 RUNNING".
std::string state_text(const JobStatus& status);

nlohmann::json status_json(const SubmissionRecord& record, const JobStatus& status);

}  // namespace dlaunch::jobs
