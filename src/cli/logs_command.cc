#include "cli/logs_command.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <memory>
#include <poll.h>

#include "cli/command_parser.h"
#include "cli/job_argument.h"
#include "cli/line_printer.h"
#include "cli/log_view.h"
#include "jobs/job_status.h"
#include "jobs/rank_logs.h"
#include "jobs/run_folder.h"
#include "util/command_line.h"
#include "util/error.h"

namespace dlaunch::cli {
namespace {

constexpr const char* kLogsDescription =
    "Show a submitted job's worker output, or a run's by its --log-dir, from the per-rank log files, merged "
    "in time order with [rankR]: prefixes, or one rank's alone";

struct LogsArgs {
  std::string job;
  std::string output_dir;
  std::string ranks;
  int node = -1;
  int attempt = -1;
  int tail = -1;
  std::string grep;
  bool follow = false;
  bool json = false;
};

void configure_logs(CLI::App& app, LogsArgs& args) {
  util::set_usage(app, "dlaunch logs [options] JOB");
  add_job_argument(app, args.job, args.output_dir);
  app.add_option("--rank", args.ranks, "Only these global ranks: 0, 0,3 or 0-3 (one rank: its lines without prefix)")
      ->group("Which output")
      ->type_name("LIST");
  util::add_count_option(app, "--node", args.node, "Only the ranks of node rank N (in the attempt shown)",
                         "Which output", "N", 1 << 20);
  util::add_count_option(app, "--attempt", args.attempt,
                         "Attempt K of the run (0 is the first; default: the last, after any restarts)",
                         "Which output", "K", 1 << 20);
  app.add_option("--grep", args.grep, "Only lines matching RE (POSIX extended regular expression)")
      ->group("Which output")
      ->type_name("RE");
  util::add_count_option(app, "-n,--tail", args.tail, "Only the last N lines (of the merged output)", "Output",
                         "N", 1 << 24);
  app.add_flag("-f,--follow", args.follow, "Keep showing new lines until the job ends (Ctrl-C stops following)")
      ->group("Output");
  app.add_flag("--json", args.json,
               "Print each line as a JSON object of its own: rank, stream (stdout or stderr), time_ms (when it "
               "arrived, or null) and line")
      ->group("Output");
  util::finish_help(app, {{"dlaunch logs last", "every rank's output of the newest job, merged in time order"},
                          {"dlaunch logs 12 --node 1 --tail 50", "the last 50 lines of node 1's ranks"},
                          {"dlaunch logs 12 --follow --grep 'loss|error'", "new lines about losses or errors, live"},
                          {"dlaunch logs 20_3 --attempt 0 --rank 3", "rank 3 of sweep 20's task 3, first attempt"},
                          {"dlaunch logs logs -f", "the run of 'dlaunch run --log-dir logs ...', live"}});
}

std::string job_folder(const jobs::FoundJob& found) {
  if (found.record.tasks.empty()) return found.record.folder;
  if (!found.task)
    throw util::InputError(fmt::format("job {} is an array of {} tasks, each with its own logs: give one, "
                                       "e.g. 'dlaunch logs {}_{}'",
                                       found.record.job_id, found.record.tasks.size(), found.record.job_id,
                                       found.record.tasks.front().index));
  for (const auto& task : found.record.tasks)
    if (task.index == *found.task) return task.folder;
  throw util::InputError(fmt::format("job {} has no task {}", found.record.job_id, *found.task));
}

bool job_is_over(const jobs::FoundJob& found) {
  if (found.record.job_id.empty()) return true;
  return jobs::has_ended(jobs::current_status(found.record), found.task);
}

// A run's --log-dir has no Slurm job: it ends with its result.json, or
// when the launcher seen running its workers here is gone; what the
// watch cannot tell is said once.
std::function<bool()> run_is_over(const std::string& folder) {
  auto watch = std::make_shared<jobs::RunEndWatch>(folder);
  return [watch] {
    std::string note;
    const bool over = watch->ended(&note);
    if (!note.empty()) fmt::print(stderr, "dlaunch: {}\n", note);
    return over;
  };
}

// Following ends when Slurm shows the job ended or forgot it, or a run's
// --log-dir its end. A --srun run has no Slurm job to ask: its logs are
// shown as they are.
FollowWorld follow_world(const jobs::FoundJob& found) {
  auto pause = [](std::chrono::milliseconds time) { ::poll(nullptr, 0, static_cast<int>(time.count())); };
  if (found.record.run_log_dir) return {run_is_over(found.record.folder), pause};
  return {[&found] { return job_is_over(found); }, pause};
}

}  // namespace

int logs_command(const CommandArgs& raw) {
  std::optional<LogsArgs> parsed = parse_with(raw, kLogsDescription, "dlaunch logs", configure_logs);
  if (!parsed) return 0;
  const LogsArgs& args = *parsed;
  LinePrinter printer(args.grep, args.tail);
  if (args.json) printer.set_format(LineFormat::kJsonLines);
  jobs::LogChoice choice;
  if (!args.ranks.empty()) choice.ranks = jobs::parse_rank_list(args.ranks);
  if (args.node >= 0) choice.node = args.node;
  if (args.attempt >= 0) choice.attempt = args.attempt;
  auto found = find_job_argument(args.job, args.output_dir);
  const std::string folder = job_folder(found);
  if (args.follow) follow_logs(folder, choice, printer, follow_world(found));
  else show_logs(folder, choice, printer);
  return 0;
}

util::CommandLineSpec logs_command_line() { return command_line_of(kLogsDescription, "dlaunch logs", configure_logs); }

}  // namespace dlaunch::cli
