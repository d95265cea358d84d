// A --log-dir of dlaunch run or dlaunch ssh read back as a job, for
// `dlaunch status`, `logs` and `stacks`: the same records a submission's
// logs/ holds (launch/run_record.h: attempt_K/node<N>.json, result.json;
// the rank logs and their time indexes), without a submission around it and
// without a Slurm job to ask.
//
// Its end is its result.json (the failed rank, its exit code, the failure
// summary). Before that, the folder alone cannot tell a run still going
// from a launcher that was killed; what runs on this host can
// (live_workers.h), and what it cannot tell is said, not guessed.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "jobs/job_status.h"
#include "jobs/live_workers.h"
#include "jobs/submission_record.h"

namespace dlaunch::jobs {

// FOLDER (is_run_log_dir()) as a record: its name, when it started (its
// result's "started", else when attempt_0 was made), how many nodes the
// last attempt had and how many workers node 0 ran. No job id, no command.
SubmissionRecord read_run_folder(const std::string& folder);

// The status of the run in RECORD.folder: its result when it has one (the
// verdict, exit code, restarts, the failure and its summary); else RUNNING
// when LIVE (its workers on this host) is not empty, naming them and their
// launcher; else UNKNOWN, saying why the folder cannot tell and when its
// logs were last written.
JobStatus run_status(const SubmissionRecord& record, const std::vector<LiveWorker>& live);

// When the run in a log folder has ended, for `dlaunch logs --follow`:
// its result.json is written, or the launcher seen running its workers on
// this host is gone. A run whose workers were never seen here (it runs on
// another host, or is between two attempts) ends only with its result.
class RunEndWatch {
 public:
  explicit RunEndWatch(std::string folder, std::string proc = "/proc");

  // Looks again. NOTE, when given, gets one line to say once: that no
  // worker of the run runs here, or that its launcher is gone.
  bool ended(std::string* note = nullptr);

 private:
  std::string folder_;
  std::string proc_;
  std::optional<ProcessIdentity> launcher_;
  bool noted_ = false;
};

// The stack reports a run saved in FOLDER/stacks/ (a hang's, a live
// capture's), their .txt files, oldest first.
std::vector<std::string> saved_stack_reports(const std::string& folder);

// "COMPLETED with exit code 0 at 2026-12-03T14:05:09" when the run in
// FOLDER (a --log-dir or a submission's) has a result of its own; nullopt
// while it has none.
std::optional<std::string> run_ending(const std::string& folder);

}  // namespace dlaunch::jobs
