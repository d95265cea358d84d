// Following a submitted job: queue state while it waits, its log while it
// runs, its final state and exit code at the end (`dlaunch submit --wait`).
#pragma once

#include <chrono>
#include <string>

namespace dlaunch::submit {

struct JobEnd {
  std::string state;  // COMPLETED, FAILED, CANCELLED, TIMEOUT, ...
  int exit_code = 0;  // the job's exit code; 128+N when its script was killed by signal N
};

// Parses one line of `scontrol show job -o`: JobState and ExitCode ("3:0").
// Throws SystemError when the fields are missing.
JobEnd parse_job_end(const std::string& scontrol_line);

// The line shown while JOB_ID waits in the queue: "job 12: PENDING
// (Priority), 14 s since it was submitted". Slurm's reason "None" says
// nothing and is left out.
std::string pending_line(const std::string& job_id, const std::string& state, const std::string& reason,
                         long long waited_seconds);

// Waits for JOB_ID to end, printing a status line while it is pending and
// appending LOG_PATH's new bytes to stdout while it runs. Slurm has no event
// interface for this, so it asks scontrol every POLL_INTERVAL. Throws
// SystemError when scontrol fails or no longer knows the job.
JobEnd follow_job(const std::string& job_id, const std::string& log_path,
                  std::chrono::milliseconds poll_interval = std::chrono::milliseconds(500));

}  // namespace dlaunch::submit
