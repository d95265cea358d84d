#include "launch/failure_report.h"

#include <fmt/format.h>

#include "doctor/diagnosis.h"
#include "util/exit_codes.h"
#include "util/signal_names.h"

namespace dlaunch::launch {

namespace {

// The doctor's reading of the root failure (doctor/diagnosis.h), and how
// many ranks failed because of it: what a user looks for first among N
// tracebacks.
std::string root_cause(const rendezvous::Verdict& verdict) {
  std::string text = fmt::format("dlaunch: root cause: {}\n",
                                 doctor::root_cause_line(*verdict.failure, doctor::diagnose(*verdict.failure)));
  if (verdict.consequences > 0)
    text += fmt::format("dlaunch:   {} rank{} failed as a consequence\n", verdict.consequences,
                        verdict.consequences == 1 ? "" : "s");
  return text;
}

}  // namespace

std::string format_failure_summary(const rendezvous::Verdict& verdict, int this_node_rank,
                                   const LocalFailureFacts& local) {
  std::string text = "dlaunch: ==================== job failed ====================\n";
  if (!verdict.failure) {
    if (!verdict.not_restarted.empty())
      text += fmt::format("dlaunch:   not restarted: {}\n", verdict.not_restarted);
    return text + fmt::format("dlaunch: the job failed with {}\n", util::describe_exit_code(verdict.exit_code));
  }
  const rendezvous::Failure& failure = *verdict.failure;
  text += root_cause(verdict);
  text += fmt::format("dlaunch: first failure: {}\n", rendezvous::describe_failure(failure));
  if (failure.global_rank >= 0) {
    text += fmt::format("dlaunch:   rank        {} (local rank {})\n", failure.global_rank,
                        failure.local_rank);
    text += fmt::format("dlaunch:   node        {} (node rank {})\n", failure.host, failure.node_rank);
    text += fmt::format("dlaunch:   pid         {}\n", failure.pid);
    text += failure.signal != 0
                ? fmt::format("dlaunch:   signal      {} ({})\n", util::signal_name(failure.signal),
                              failure.signal)
                : fmt::format("dlaunch:   exit code   {}\n", failure.exit_code);
  }
  const bool here = failure.node_rank == this_node_rank;
  if (here && local.python) text += fmt::format("dlaunch:   python      {}\n", *local.python);
  if (!failure.time.empty()) text += fmt::format("dlaunch:   time        {}\n", failure.time);
  if (!failure.log_file.empty()) text += fmt::format("dlaunch:   log file    {}\n", failure.log_file);
  if (!failure.error_message.empty())
    text += fmt::format("dlaunch:   error       {}\n", failure.error_message);
  if (!failure.last_lines.empty()) {
    text += "dlaunch:   last lines:\n";
    for (const auto& line : failure.last_lines) text += fmt::format("dlaunch:     | {}\n", line);
  } else if (failure.node_rank != this_node_rank && failure.global_rank >= 0) {
    text += fmt::format("dlaunch:   its output is in the log of node {}\n", failure.node_rank);
  }
  if (!verdict.not_restarted.empty())
    text += fmt::format("dlaunch:   not restarted: {}\n", verdict.not_restarted);
  if (here && local.hint) text += *local.hint + "\n";
  text += fmt::format("dlaunch: {}\n", util::describe_exit_code(verdict.exit_code));
  return text;
}

}  // namespace dlaunch::launch
