// Asking Slurm about one job: `scontrol show job -o -- JOB_ID`, run here and
// nowhere else (dlaunch status, jobs, logs, cancel, submit --wait and the
// follower of a job array all ask through this).
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "slurm/job_info.h"

namespace dlaunch::slurm {

// How long scontrol may take to answer. It gives up on its own when the
// controller is down (MessageTimeout, 10 s by default, per controller it
// knows), but a controller that accepts and never answers, or a munge
// daemon that hangs, would hold `dlaunch status` or `submit --wait` forever.
inline constexpr std::chrono::seconds kScontrolPatience{60};

// Slurm's records of JOB_ID (an array's: one per task or run of pending
// tasks), bounded as parse_job_records() bounds them. Empty when Slurm does
// not know the job: it never did, or it forgot the job MinJobAge after its
// end. Throws InputError when JOB_ID is no job id (slurm/job_id.h),
// NotConfigured (a SystemError) when Slurm is not configured on this
// machine (slurm/slurm_command.h), and SystemError naming the job and
// scontrol's own words when scontrol fails otherwise, cannot be run, or does
// not answer within PATIENCE.
std::vector<JobInfo> show_job(const std::string& job_id, std::chrono::seconds patience = kScontrolPatience);

}  // namespace dlaunch::slurm
