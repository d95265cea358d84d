#include "jobs/job_cancel.h"

#include <fmt/format.h>
#include <poll.h>

#include "jobs/live_workers.h"
#include "slurm/job_id.h"
#include "slurm/slurm_command.h"
#include "util/error.h"
#include "util/local_time.h"
#include "util/signal_names.h"
#include "util/strings.h"
#include "util/subprocess.h"

namespace dlaunch::jobs {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::chrono::milliseconds kPollInterval{500};

std::string target_of(const SubmissionRecord& record, const CancelRequest& request) {
  return request.task ? fmt::format("{}_{}", record.job_id, *request.task) : record.job_id;
}

// The part of STATUS the request is about: the job, or one task.
JobStatus narrowed(JobStatus status, const CancelRequest& request) {
  if (!request.task) return status;
  for (const auto& task : status.tasks) {
    if (task.index != *request.task) continue;
    status.state = task.state;
    status.exit_code = task.exit_code;
    status.reason = task.reason;
  }
  return status;
}

// narrowed() has put the task's state into the job's.
bool gone(const JobStatus& status) { return has_ended(status); }

void run_scancel(const std::vector<std::string>& argv) {
  util::CapturedRun run = slurm::run_slurm_command(argv, "scancel");
  if (run.exit_code != 0)
    throw util::SystemError(fmt::format("{} failed: {}", util::join(argv, " "),
                                        util::trim(run.err.empty() ? run.out : run.err)));
}

// Polls until the job left Slurm's running states, or DEADLINE.
JobStatus wait_until_gone(const SubmissionRecord& record, const CancelRequest& request, Clock::time_point deadline) {
  for (;;) {
    JobStatus status = narrowed(current_status(record), request);
    if (gone(status) || Clock::now() >= deadline) return status;
    ::poll(nullptr, 0, static_cast<int>(kPollInterval.count()));
  }
}

// A run's --log-dir has no Slurm job: how to stop it instead.
std::string how_to_stop_a_run(const SubmissionRecord& record) {
  auto live = find_live_workers(record.folder);
  std::string launcher = live.empty() ? "its dlaunch run"
                                      : fmt::format("its dlaunch run (pid {} on this host)", live.front().launcher.pid);
  return fmt::format("{} is a run's --log-dir, not a submission: there is no Slurm job to cancel. Stop the run with "
                     "Ctrl-C where it runs, or send SIGTERM to {}",
                     record.folder, launcher);
}

}  // namespace

CancelOutcome cancel_job(const SubmissionRecord& record, const CancelRequest& request) {
  if (record.run_log_dir) throw util::InputError(how_to_stop_a_run(record));
  if (record.never_submitted)
    throw util::InputError(fmt::format("{} has no Slurm job id ({}): there is no job for dlaunch to cancel",
                                       record.folder, never_submitted_summary(*record.never_submitted)));
  if (record.job_id.empty())
    throw util::InputError(fmt::format("{} was run with --srun, not submitted: there is no Slurm job to "
                                       "cancel (Ctrl-C stops a --srun run)",
                                       record.folder));
  const auto started = Clock::now();
  const std::string target = target_of(record, request);
  CancelOutcome outcome;
  JobStatus status = narrowed(current_status(record), request);
  if (gone(status)) {
    outcome.already_ended = true;
    outcome.final_status = status;
    return outcome;
  }
  if (request.signal) {
    std::string name = std::string(util::signal_name(*request.signal)).substr(3);
    // Without --batch, scancel signals the job's steps: every node's dlaunch
    // run, which forwards the signal to its workers.
    run_scancel(slurm::job_command({"scancel", "--signal=" + name}, target));
    outcome.signalled = true;
    fmt::print(stderr, "dlaunch: sent SIG{} to job {}'s launchers (forwarded to the workers); waiting up to {} s "
                       "for it to end\n",
               name, target, request.grace.count());
    status = wait_until_gone(record, request, Clock::now() + request.grace);
    outcome.ended_after_signal = gone(status);
  }
  if (!gone(status)) {
    run_scancel(slurm::job_command({"scancel"}, target));
    outcome.cancelled = true;
    fmt::print(stderr, "dlaunch: cancelled job {}; waiting up to {} s for Slurm to end it\n", target,
               request.timeout.count());
    status = wait_until_gone(record, request, Clock::now() + request.timeout);
  }
  outcome.waited_seconds = std::chrono::duration<double>(Clock::now() - started).count();
  if (!gone(status))
    throw util::SystemError(fmt::format("job {} is still {} {:.0f} s after it was cancelled; Slurm may be "
                                        "waiting for a node (check 'scontrol show job {}')",
                                        target, status.state, outcome.waited_seconds, target));
  // Slurm forgot it between two looks: say what was done, for `dlaunch status`.
  if (status.state == "UNKNOWN" && !request.task && outcome.cancelled) {
    (void)save_recorded_end(record.folder, {"CANCELLED", std::nullopt,
                                            fmt::format("dlaunch cancel, at {}", util::local_time_now()), "", ""});
    status.state = "CANCELLED";
  }
  outcome.final_status = status;
  return outcome;
}

}  // namespace dlaunch::jobs
