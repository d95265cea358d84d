// Putting a preempted Slurm job back in the queue.
#pragma once

#include <string>
#include <vector>

namespace dlaunch::slurm {

// Runs `scontrol requeue JOB_ID`. Slurm then stops every step of the job
// and starts the batch script again, with SLURM_RESTART_COUNT one higher.
// Throws SystemError with scontrol's own message and what to check.
void requeue_job(const std::string& job_id);

// Sets JOB_ID's excluded nodes (ExcNodeList) to HOSTS, the whole list
// (empty: none): `scontrol update JobId=JOB_ID ExcNodeList=LIST`. Slurm
// takes it only while the job is pending: for a running job it answers "Job
// is no longer pending execution", and it does take it right after
// `scontrol requeue`, while the job's old steps still end (tried on Slurm
// 22.05). Runs with SIGTERM ignored: the requeue's SIGTERM to the job's
// steps would kill it. Throws SystemError with scontrol's own words.
void exclude_nodes(const std::string& job_id, const std::vector<std::string>& hosts);

}  // namespace dlaunch::slurm
