// Cancelling a submitted job and waiting until it is gone (`dlaunch
// cancel`), optionally after a signal that lets the workers checkpoint.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "jobs/job_status.h"
#include "jobs/submission_record.h"

namespace dlaunch::jobs {

struct CancelRequest {
  std::optional<int> task;      // one task of an array; else the whole job
  std::optional<int> signal;    // sent to every node's dlaunch run first (forwarded to the workers)
  std::chrono::seconds grace{120};    // how long the job may take to end after the signal
  std::chrono::seconds timeout{300};  // how long to wait for Slurm to end it after scancel
};

struct CancelOutcome {
  bool already_ended = false;    // nothing was done
  bool signalled = false;
  bool ended_after_signal = false;  // it ended within the grace time: no scancel
  bool cancelled = false;           // scancel ran
  JobStatus final_status;
  double waited_seconds = 0;
};

// Does it, printing one line per step to stderr. Throws SystemError when
// scancel fails or the job is still there after the timeout; InputError
// for a job that was never submitted with sbatch.
CancelOutcome cancel_job(const SubmissionRecord& record, const CancelRequest& request);

}  // namespace dlaunch::jobs
