#include "cli/cancel_command.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/command_parser.h"
#include "cli/job_argument.h"
#include "jobs/job_cancel.h"
#include "util/command_line.h"
#include "util/error.h"
#include "util/signal_names.h"

namespace dlaunch::cli {
namespace {

constexpr const char* kCancelDescription =
    "Cancel a submitted job (optionally first sending the preemption signal so the workers save a "
    "checkpoint) and wait until Slurm has ended it";

struct CancelArgs {
  std::string job;
  std::string output_dir;
  std::string signal;
  int grace = 120;
  int timeout = 300;
  bool json = false;
};

void configure_cancel(CLI::App& app, CancelArgs& args) {
  util::set_usage(app, "dlaunch cancel [options] JOB");
  add_job_argument(app, args.job, args.output_dir);
  app.add_option("--signal", args.signal,
                 "First send SIG to every node's dlaunch run, which forwards it to the workers (e.g. USR1, "
                 "the --signal of dlaunch submit, so they save a checkpoint), and cancel only if the job "
                 "has not ended within --grace")
      ->group("Stopping")
      ->type_name("SIG");
  app.add_option("--grace", args.grace, "Seconds the job may take to end after --signal (default 120)")
      ->group("Stopping")
      ->type_name("SECONDS")
      ->check(CLI::Range(0, 7 * 24 * 3600).description(""));
  app.add_option("--timeout", args.timeout, "Seconds to wait for Slurm to end the job after scancel (default 300)")
      ->group("Stopping")
      ->type_name("SECONDS")
      ->check(CLI::Range(1, 7 * 24 * 3600).description(""));
  app.add_flag("--json", args.json, "One JSON object: what was done and the job's final state")->group("Output");
  util::finish_help(app, {{"dlaunch cancel 12", "cancel job 12 and wait until it is gone"},
                          {"dlaunch cancel last --signal USR1 --grace 300",
                           "let the newest job's workers checkpoint for up to 5 minutes, then cancel it"},
                          {"dlaunch cancel 20_3", "cancel task 3 of array (sweep) 20 only"},
                          {"dlaunch cancel 12 --json", "the outcome as JSON, for scripts"}});
}

std::optional<int> parse_signal(const std::string& text) {
  if (text.empty()) return std::nullopt;
  std::string name = text;
  auto number = util::signal_number(name);
  if (!number && !name.starts_with("SIG")) number = util::signal_number("SIG" + name);
  if (!number)
    throw util::UsageError(fmt::format("--signal '{}' is not a signal; give a name such as USR1 or USR2 (or "
                                       "its number)",
                                       text));
  return number;
}

}  // namespace

int cancel_command(const CommandArgs& raw) {
  std::optional<CancelArgs> parsed = parse_with(raw, kCancelDescription, "dlaunch cancel", configure_cancel);
  if (!parsed) return 0;
  const CancelArgs& args = *parsed;
  jobs::CancelRequest request;
  request.signal = parse_signal(args.signal);
  request.grace = std::chrono::seconds(args.grace);
  request.timeout = std::chrono::seconds(args.timeout);
  auto found = find_job_argument(args.job, args.output_dir);
  request.task = found.task;
  jobs::CancelOutcome outcome = jobs::cancel_job(found.record, request);
  const std::string target = request.task ? fmt::format("{}_{}", found.record.job_id, *request.task) : found.record.job_id;
  const std::string& state = outcome.final_status.state;
  if (args.json) {
    nlohmann::json document = {{"job_id", target},
                               {"already_ended", outcome.already_ended},
                               {"signalled", outcome.signalled},
                               {"ended_after_signal", outcome.ended_after_signal},
                               {"cancelled", outcome.cancelled},
                               {"state", state},
                               {"waited_s", outcome.waited_seconds},
                               {"folder", found.record.folder}};
    fmt::print("{}\n", document.dump(2));
  } else if (outcome.already_ended) {
    fmt::print("job {} had already ended: {}; nothing to cancel\n", target, state);
  } else {
    fmt::print("job {} ended: {} ({:.0f} s)\n", target, state, outcome.waited_seconds);
  }
  return 0;
}

util::CommandLineSpec cancel_command_line() { return command_line_of(kCancelDescription, "dlaunch cancel", configure_cancel); }

}  // namespace dlaunch::cli
