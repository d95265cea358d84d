// What a submission folder says about its job, read back after the fact
// (`dlaunch jobs`, `status`, `logs`, `cancel`). dlaunch submit writes:
//   job_id        the Slurm job id (the array job id for a sweep or array)
//   config.json   the merged settings, the command, the job's name
//   sweep.json    for a sweep or array: each task's index, values, folder
//   task_<i>/     a task's own folder (config.json, slurm log, logs/)
//   state.json    the last final state dlaunch saw from Slurm (for when
//                 Slurm has forgotten the job: MinJobAge)
//   not_submitted.json  sbatch refused the job: its words (never_submitted.h)
// and node rank 0's dlaunch run writes logs/result.json (launch/run_record.h).
// A --log-dir of dlaunch run or dlaunch ssh holds what logs/ holds, without
// a submission around it: it is read back as a record too (run_folder.h).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "jobs/never_submitted.h"

namespace dlaunch::jobs {

struct TaskRecord {
  int index = 0;
  std::string folder;  // absolute
  std::map<std::string, std::string> values;  // a sweep's NAME=VALUE; empty for a raw --array
};

// A final state as recorded: by dlaunch from Slurm, or by dlaunch run.
struct RecordedEnd {
  std::string state;  // COMPLETED, FAILED, CANCELLED, TIMEOUT, ...
  std::optional<int> exit_code;
  std::string source;  // "Slurm, seen at 2026-12-03T14:05:09", "dlaunch run on node 0"
  std::string elapsed;  // Slurm's RunTime when known
  std::string nodes;    // Slurm's NodeList when known
};

struct SubmissionRecord {
  std::string folder;     // absolute
  std::string job_id;     // "" when never submitted with sbatch (--srun)
  std::string name;       // the job's name
  std::string submitted;  // "2026-12-03T14:05:09", from the folder's timestamp
  int nodes = 0;
  int gpus_per_node = 0;
  std::vector<std::string> command;
  std::vector<TaskRecord> tasks;  // a sweep's or array's; empty for one job
  nlohmann::json settings;        // config.json's "settings", as written
  // FOLDER is a --log-dir of dlaunch run or dlaunch ssh (is_run_log_dir()):
  // no submission, no Slurm job; its state is its result.json, or what
  // runs on this host (run_folder.h).
  bool run_log_dir = false;
  // sbatch refused the job (or printed no job id): no Slurm job to ask about.
  std::optional<NeverSubmitted> never_submitted;
};

// Reads FOLDER. Throws InputError when it is not a submission folder (no
// config.json), a file in it is unreadable JSON, nests deeper than
// util::kMaxJsonDepth or is no regular file (a FIFO, a link, too big), or
// its job_id holds no Slurm job id (slurm/job_id.h), naming the file;
// SystemError when a file cannot be read at all (no permission).
SubmissionRecord read_submission(const std::string& folder);

// The submission folders under each of OUTPUT_DIRS (missing ones skipped),
// newest first. Folders that cannot be read are skipped; LEFT_OUT, when
// given, gets why for each (the error that names the file).
std::vector<SubmissionRecord> list_submissions(const std::vector<std::string>& output_dirs,
                                               std::vector<std::string>* left_out = nullptr);

// Whether FOLDER is a run's log folder itself (a --log-dir of dlaunch run
// or dlaunch ssh, or a submission's logs/): no config.json in it, and
// attempt_N/ or result.json at its top.
bool is_run_log_dir(const std::string& folder);

// The folder in which a run's logs are: FOLDER/logs (a task's: its
// folder's), or FOLDER itself when is_run_log_dir(FOLDER).
std::string logs_folder(const std::string& folder);

// The logs of the last run in FOLDER: logs/requeue_N with the highest N
// when Slurm started the job again (its runs' logs stay apart), else logs/.
std::string last_run_folder(const std::string& folder);

// The numbers N of FOLDER's subfolders named PREFIX<N> ("attempt_3",
// "requeue_1", "rank12"), below 2^20, sorted.
std::vector<int> numbered_folders(const std::string& folder, const std::string& prefix);

// The recorded end of the job in FOLDER (a submission's or a task's):
// state.json first, else dlaunch run's result.json of the last run
// (logs/result.json, or logs/requeue_N/result.json after a requeue).
std::optional<RecordedEnd> recorded_end(const std::string& folder);

// Saves END as FOLDER/state.json (atomically). Errors are returned as text,
// empty on success: a record that cannot be written must not stop a status.
std::string save_recorded_end(const std::string& folder, const RecordedEnd& end);

// dlaunch run's result.json of the last run in FOLDER, if any, and if it
// is that run's: a --log-dir used again keeps an earlier run's result.json
// until the new run ends, and a result older than the last attempt's node
// records (or naming another incarnation of the job than they do) is the
// earlier run's, not this one's.
std::optional<nlohmann::json> run_result(const std::string& folder);

// The job's verdict as the launcher that spoke for it recorded it in
// result.json: it is in as soon as the job is decided, before Slurm ends
// the job, and stays true when Slurm cannot end it cleanly (a node that
// froze, the batch host lost).
struct RunVerdict {
  std::string state;  // COMPLETED or FAILED
  int exit_code = 1;
  std::string written_by;  // the host of the launcher that wrote it
  // How the Slurm job was ended when dlaunch had to end it itself (its
  // batch host lost: "cancelled by dlaunch: ..."); "" otherwise.
  std::string slurm_end;
  // The job's life: nodes lost and how, spares that took their place.
  std::vector<std::string> timeline;
  // What launchers that decided alone saw otherwise ("HOST: node 0 (...)
  // sent nothing ..."): the other side of a network cut.
  std::vector<std::string> also_seen;
};

// The verdict of the last run in FOLDER; nullopt when none was written.
std::optional<RunVerdict> run_verdict(const std::string& folder);

// Reads a small JSON file (at most 4 MiB, a regular file, not a link,
// nested at most util::kMaxJsonDepth). nullopt when it does not exist;
// throws InputError naming PATH when it is not such JSON (as
// util::read_outside_file does for a file of the wrong kind).
std::optional<nlohmann::json> read_json_file(const std::string& path);

}  // namespace dlaunch::jobs
