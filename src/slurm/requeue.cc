#include "slurm/requeue.h"

#include <fmt/format.h>

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

}  // namespace dlaunch::slurm
