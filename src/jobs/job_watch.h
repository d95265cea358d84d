// Following a submitted job: queue state while it waits, its log while it
// runs, its final state and exit code at the end (`dlaunch submit --wait`).
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "jobs/submission_record.h"
#include "slurm/job_info.h"

namespace dlaunch::jobs {

struct JobEnd {
  std::string state;  // COMPLETED, FAILED, CANCELLED, TIMEOUT, ...
  int exit_code = 0;  // the job's exit code; 128+N when its script was killed by signal N
  // Why the end reported is dlaunch's verdict rather than what Slurm shows
  // ("" when they agree).
  std::string note;
};

// How long a job may show COMPLETING, once its verdict is in, before the
// follower reports the verdict: Slurm keeps a job COMPLETING until every
// node confirmed its end, and a node that froze or lost its link or power
// confirms nothing until Slurm declares it down (SlurmdTimeout, 300 s by
// default).
inline constexpr std::chrono::seconds kCompletingPatience{10};

// What the follower reports once Slurm has shown the job's end (SLURM, its
// final state), or cannot show one (nullopt: it forgot the job, or it has
// been COMPLETING for kCompletingPatience), given dlaunch's VERDICT of it.
// Slurm's end stands when it agrees with the verdict; the verdict stands
// when Slurm shows none, and when dlaunch ended the Slurm job itself (the
// batch host lost: Slurm records CANCELLED). nullopt: nothing is known.
std::optional<JobEnd> judged_end(const std::optional<JobEnd>& slurm, const std::optional<RunVerdict>& verdict,
                                 const std::string& why_no_slurm_end);

// The end RECORD (scontrol's, of a job in a final state) shows: its
// JobState's first word and the exit code to report (slurm::end_exit_code).
// Throws SystemError when JobState or ExitCode is missing.
JobEnd parse_job_end(const slurm::JobInfo& record);

// The line shown while JOB_ID waits in the queue: "job 12: PENDING
// (Priority), 14 s since it was submitted". Slurm's reason "None" says
// nothing and is left out.
std::string pending_line(const std::string& job_id, const std::string& state, const std::string& reason,
                         long long waited_seconds);

// Waits for JOB_ID to end, printing a status line while it is pending and
// appending LOG_PATH's new bytes to stdout while it runs. Slurm has no event
// interface for this, so it asks scontrol every POLL_INTERVAL. The job's
// verdict in FOLDER (the submission folder) decides when Slurm cannot show
// the end (judged_end). Throws SystemError when scontrol fails, or no
// longer knows the job and no verdict was recorded.
JobEnd follow_job(const std::string& job_id, const std::string& log_path, const std::string& folder,
                  std::chrono::milliseconds poll_interval = std::chrono::milliseconds(500));

}  // namespace dlaunch::jobs
