#include "slurm/job_query.h"

#include <fmt/format.h>

#include "slurm/job_id.h"
#include "slurm/slurm_command.h"
#include "util/error.h"
#include "util/strings.h"
#include "util/subprocess.h"

namespace dlaunch::slurm {
namespace {

// What coreutils' timeout answers when scontrol ran out of time (124), had
// to be killed after it (128+SIGKILL), or was not found (127).
constexpr int kTimedOut = 124;
constexpr int kKilledAfterTimeout = 137;
constexpr int kNotFound = 127;

// scontrol under coreutils' timeout: run_captured itself waits without a
// deadline, and timeout ends scontrol (SIGTERM, then SIGKILL 5 s later)
// without a thread or a second way to start a child here.
std::vector<std::string> bounded_show_job(const std::string& job_id, std::chrono::seconds patience) {
  std::vector<std::string> argv = {"timeout", "--kill-after=5", std::to_string(patience.count())};
  for (auto& word : job_command({"scontrol", "show", "job", "-o"}, job_id)) argv.push_back(std::move(word));
  return argv;
}

std::string why_unanswered(const std::string& job_id, const util::CapturedRun& show, std::chrono::seconds patience) {
  if (show.exit_code == kTimedOut || show.exit_code == kKilledAfterTimeout)
    return fmt::format("cannot ask Slurm about job {}: scontrol did not answer within {} s. Is the controller "
                       "up ('scontrol ping' tells)?",
                       job_id, patience.count());
  if (show.exit_code == kNotFound)
    return fmt::format("cannot ask Slurm about job {}: cannot run 'scontrol': not found in PATH. Is the Slurm "
                       "client installed and in PATH on this machine?",
                       job_id);
  return fmt::format("cannot ask Slurm about job {}: scontrol says: {}", job_id,
                     util::trim(show.err.empty() ? show.out : show.err));
}

}  // namespace

std::vector<JobInfo> show_job(const std::string& job_id, std::chrono::seconds patience) {
  util::CapturedRun show = run_slurm_command(bounded_show_job(job_id, patience), "scontrol");
  if (show.exit_code == 0) return parse_job_records(show.out);
  // The controller's word for a job it purged (MinJobAge) or never had.
  if (show.err.find("Invalid job id") != std::string::npos) return {};
  throw util::SystemError(why_unanswered(job_id, show, patience));
}

}  // namespace dlaunch::slurm
