// Putting a preempted Slurm job back in the queue.
#pragma once

#include <string>

namespace dlaunch::slurm {

// Runs `scontrol requeue JOB_ID`. Slurm then stops every step of the job
// and starts the batch script again, with SLURM_RESTART_COUNT one higher.
// Throws SystemError with scontrol's own message and what to check.
void requeue_job(const std::string& job_id);

}  // namespace dlaunch::slurm
