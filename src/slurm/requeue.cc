#include "slurm/requeue.h"

#include <fmt/format.h>

#include "slurm/hostlist.h"
#include "slurm/job_id.h"
#include "slurm/slurm_command.h"
#include "util/error.h"
#include "util/strings.h"
#include "util/subprocess.h"

namespace dlaunch::slurm {

void requeue_job(const std::string& job_id) {
  util::CapturedRun requeue = run_slurm_command(job_command({"scontrol", "requeue"}, job_id), "scontrol");
  if (requeue.exit_code == 0) return;
  throw util::SystemError(fmt::format(
      "scontrol requeue {} failed (exit {}): {}. The job must be a batch job submitted with "
      "--requeue on a cluster that allows requeueing (JobRequeue in slurm.conf)",
      job_id, requeue.exit_code, util::trim(requeue.err.empty() ? requeue.out : requeue.err)));
}

void exclude_nodes(const std::string& job_id, const std::vector<std::string>& hosts) {
  const std::string& id = checked_job_id(job_id, "the job id given to scontrol update");
  const std::string list = compress_hostlist(hosts);
  // Right after the requeue, Slurm sends SIGTERM to every process of the
  // job's steps, this scontrol too (the launcher itself reads its signals
  // from a signalfd): on the test cluster one update in three died of it,
  // exit 143. An ignored SIGTERM stays ignored across exec, and the update
  // takes milliseconds, far less than the KillWait before Slurm's SIGKILL.
  util::CapturedRun update = run_slurm_command(
      {"/bin/sh", "-c", "trap '' TERM; exec scontrol \"$@\"", "sh", "update", "JobId=" + id, "ExcNodeList=" + list},
      "scontrol");
  if (update.exit_code == 0) return;
  std::string words(util::trim(update.err.empty() ? update.out : update.err));
  throw util::SystemError(fmt::format("scontrol update JobId={} ExcNodeList={} failed (exit {}): {}", id, list,
                                      update.exit_code, words.empty() ? "it said nothing" : words));
}

}  // namespace dlaunch::slurm
