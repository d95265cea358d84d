#include "cli/logs_command.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <poll.h>

#include "cli/job_argument.h"
#include "cli/line_printer.h"
#include "submit/job_status.h"
#include "submit/log_merge.h"
#include "submit/rank_logs.h"
#include "util/command_line.h"
#include "util/error.h"

namespace dlaunch::cli {
namespace {

constexpr const char* kDescription =
    "Show a submitted job's worker output from its per-rank log files, merged in time order with "
    "[rankR]: prefixes, or one rank's alone";
constexpr int kFollowPollMs = 250;
constexpr int kStatusEveryPolls = 8;  // ask Slurm whether the job ended every 2 s

struct LogsArgs {
  std::string job;
  std::string output_dir;
  std::string ranks;
  int node = -1;
  int attempt = -1;
  int tail = -1;
  std::string grep;
  bool follow = false;
};

void configure_app(CLI::App& app, LogsArgs& args) {
  util::set_usage(app, "dlaunch logs [options] JOB");
  add_job_argument(app, args.job, args.output_dir);
  app.add_option("--rank", args.ranks, "Only these global ranks: 0, 0,3 or 0-3 (one rank: its lines without prefix)")
      ->group("Which output")
      ->type_name("LIST");
  app.add_option("--node", args.node, "Only the ranks of node rank N (in the attempt shown)")
      ->group("Which output")
      ->type_name("N")
      ->check(CLI::Range(0, 1 << 20).description(""));
  app.add_option("--attempt", args.attempt, "Attempt K of the run (0 is the first; default: the last, after "
                                            "any restarts)")
      ->group("Which output")
      ->type_name("K")
      ->check(CLI::Range(0, 1 << 20).description(""));
  app.add_option("--grep", args.grep, "Only lines matching RE (POSIX extended regular expression)")
      ->group("Which output")
      ->type_name("RE");
  app.add_option("-n,--tail", args.tail, "Only the last N lines (of the merged output)")
      ->group("Output")
      ->type_name("N")
      ->check(CLI::Range(0, 1 << 24).description(""));
  app.add_flag("-f,--follow", args.follow, "Keep showing new lines until the job ends (Ctrl-C stops following)")
      ->group("Output");
  util::finish_help(app, {{"dlaunch logs last", "every rank's output of the newest job, merged in time order"},
                          {"dlaunch logs 12 --rank 3", "rank 3's output alone"},
                          {"dlaunch logs 12 --node 1 --tail 50", "the last 50 lines of node 1's ranks"},
                          {"dlaunch logs 12 --follow --grep 'loss|error'", "new lines about losses or errors, live"},
                          {"dlaunch logs 20_3 --attempt 0", "task 3 of sweep 20, its first attempt"}});
}

std::vector<std::unique_ptr<submit::LogLineSource>> open_sources(const submit::AttemptLogs& logs) {
  std::vector<std::unique_ptr<submit::LogLineSource>> sources;
  for (const auto& rank : logs.ranks) {
    if (!rank.stdout_path.empty()) sources.push_back(std::make_unique<submit::LogLineSource>(rank.rank, 1, rank.stdout_path));
    if (!rank.stderr_path.empty()) sources.push_back(std::make_unique<submit::LogLineSource>(rank.rank, 2, rank.stderr_path));
  }
  return sources;
}

std::string job_folder(const submit::FoundJob& found) {
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

bool job_is_over(const submit::FoundJob& found) {
  if (found.record.job_id.empty()) return true;
  return submit::has_ended(submit::current_status(found.record), found.task);
}

void say_which_attempt(const submit::AttemptLogs& logs, const submit::LogChoice& choice) {
  if (logs.attempts > 1 && !choice.attempt)
    fmt::print(stderr, "dlaunch: attempt {} of {} (the last; --attempt K shows another)\n", logs.attempt,
               logs.attempts);
}

using Sources = std::vector<std::unique_ptr<submit::LogLineSource>>;

// Everything of LOGS there is now (FINISHED: the files will not grow).
Sources print_attempt(const submit::AttemptLogs& logs, LinePrinter& printer, bool finished) {
  printer.set_prefixed(logs.ranks.size() > 1);
  Sources sources = open_sources(logs);
  if (finished)
    for (auto& source : sources) source->finish();
  submit::merge_available(sources, [&](const submit::MergedLine& line) { printer.print(line); });
  return sources;
}

// The logs to follow once they exist: a job still pending has none yet.
std::optional<submit::AttemptLogs> logs_when_there(const submit::FoundJob& found, const std::string& folder,
                                                   const submit::LogChoice& choice) {
  bool said = false;
  for (;;) {
    try {
      return submit::find_rank_logs(folder, choice);
    } catch (const util::InputError& error) {
      if (job_is_over(found)) throw;
      if (!said) fmt::print(stderr, "dlaunch: waiting for the job's workers to start ({})\n", error.what());
      said = true;
    }
    ::poll(nullptr, 0, kFollowPollMs * kStatusEveryPolls);
  }
}

// Shows new lines until the job ends. A restart (a new attempt folder)
// switches to the new attempt's files, unless --attempt chose one.
void follow(const submit::FoundJob& found, const std::string& folder, const submit::LogChoice& choice,
            LinePrinter& printer) {
  auto logs = logs_when_there(found, folder, choice);
  say_which_attempt(*logs, choice);
  bool over = job_is_over(found);
  Sources sources = print_attempt(*logs, printer, over);
  printer.flush_tail();
  WaitingLines waiting;
  waiting.show(sources, printer);  // notes what is held now: shown at the next poll if still held
  auto print = [&](const submit::MergedLine& line) { printer.print(line); };
  for (int polls = 1; !over; ++polls) {
    ::poll(nullptr, 0, kFollowPollMs);
    bool look = polls % kStatusEveryPolls == 0;
    if (look && (over = job_is_over(found)))
      for (auto& source : sources) source->finish();
    submit::merge_available(sources, print);
    waiting.show(sources, printer);
    if (look && !over && !choice.attempt) {
      submit::AttemptLogs latest = submit::find_rank_logs(folder, choice);
      if (latest.attempt != logs->attempt) {
        for (auto& source : sources) source->finish();
        submit::merge_available(sources, print);
        fmt::print(stderr, "dlaunch: attempt {} started (the workers restarted)\n", latest.attempt);
        logs = latest;
        sources = print_attempt(*logs, printer, false);
        waiting.forget();
      }
    }
    std::fflush(stdout);
  }
}

}  // namespace

int logs_command(const CommandArgs& raw) {
  CLI::App app(kDescription, "dlaunch logs");
  LogsArgs args;
  configure_app(app, args);
  if (!util::parse_command_line(app, raw, "dlaunch logs")) return 0;
  LinePrinter printer(args.grep, args.tail);
  submit::LogChoice choice;
  if (!args.ranks.empty()) choice.ranks = submit::parse_rank_list(args.ranks);
  if (args.node >= 0) choice.node = args.node;
  if (args.attempt >= 0) choice.attempt = args.attempt;
  auto found = find_job_argument(args.job, args.output_dir);
  const std::string folder = job_folder(found);
  if (!args.follow) {
    submit::AttemptLogs logs = submit::find_rank_logs(folder, choice);
    say_which_attempt(logs, choice);
    print_attempt(logs, printer, true);
    printer.flush_tail();
    return 0;
  }
  follow(found, folder, choice, printer);
  return 0;
}

util::CommandLineSpec logs_command_line() {
  CLI::App app(kDescription, "dlaunch logs");
  LogsArgs args;
  configure_app(app, args);
  return util::describe_command_line(app);
}

}  // namespace dlaunch::cli
