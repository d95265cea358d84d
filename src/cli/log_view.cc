#include "cli/log_view.h"

#include <fmt/format.h>
#include <memory>
#include <vector>

#include "jobs/log_merge.h"
#include "util/error.h"

namespace dlaunch::cli {
namespace {

using Sources = std::vector<std::unique_ptr<jobs::LogLineSource>>;

Sources open_sources(const jobs::AttemptLogs& logs) {
  Sources sources;
  for (const auto& rank : logs.ranks) {
    if (!rank.stdout_path.empty())
      sources.push_back(std::make_unique<jobs::LogLineSource>(rank.rank, 1, rank.stdout_path));
    if (!rank.stderr_path.empty())
      sources.push_back(std::make_unique<jobs::LogLineSource>(rank.rank, 2, rank.stderr_path));
  }
  return sources;
}

void say_which_attempt(const jobs::AttemptLogs& logs, const jobs::LogChoice& choice) {
  if (logs.attempts > 1 && !choice.attempt)
    fmt::print(stderr, "dlaunch: attempt {} of {} (the last; --attempt K shows another)\n", logs.attempt,
               logs.attempts);
}

// The files will not grow any more: their unterminated last lines are lines.
void finish(Sources& sources) {
  for (auto& source : sources) source->finish();
}

void print_available(Sources& sources, LinePrinter& printer) {
  jobs::merge_available(sources, [&](const jobs::MergedLine& line) { printer.print(line); });
}

// Everything of LOGS there is now (FINISHED: the files will not grow).
Sources print_attempt(const jobs::AttemptLogs& logs, LinePrinter& printer, bool finished) {
  printer.set_prefixed(logs.ranks.size() > 1);
  Sources sources = open_sources(logs);
  if (finished) finish(sources);
  print_available(sources, printer);
  return sources;
}

// The logs to follow once they exist: a job still pending has none yet.
jobs::AttemptLogs logs_when_there(const std::string& folder, const jobs::LogChoice& choice,
                                    const FollowWorld& world, const FollowPace& pace) {
  bool said = false;
  for (;;) {
    try {
      return jobs::find_rank_logs(folder, choice);
    } catch (const util::InputError& error) {
      if (world.job_is_over()) throw;
      if (!said) fmt::print(stderr, "dlaunch: waiting for the job's workers to start ({})\n", error.what());
      said = true;
    }
    world.pause(pace.poll * pace.status_every_polls);
  }
}

// A restart made a new attempt folder: the old attempt's files are read to
// their end, then the new one's are followed.
void follow_a_restart(const std::string& folder, const jobs::LogChoice& choice, jobs::AttemptLogs& logs,
                      Sources& sources, LinePrinter& printer, WaitingLines& waiting) {
  jobs::AttemptLogs latest = jobs::find_rank_logs(folder, choice);
  if (latest.attempt == logs.attempt) return;
  finish(sources);
  print_available(sources, printer);
  fmt::print(stderr, "dlaunch: attempt {} started (the workers restarted)\n", latest.attempt);
  logs = std::move(latest);
  sources = print_attempt(logs, printer, false);
  waiting.forget();
}

}  // namespace

void show_logs(const std::string& folder, const jobs::LogChoice& choice, LinePrinter& printer) {
  jobs::AttemptLogs logs = jobs::find_rank_logs(folder, choice);
  say_which_attempt(logs, choice);
  print_attempt(logs, printer, true);
  printer.flush_tail();
}

void follow_logs(const std::string& folder, const jobs::LogChoice& choice, LinePrinter& printer,
                 const FollowWorld& world, const FollowPace& pace) {
  jobs::AttemptLogs logs = logs_when_there(folder, choice, world, pace);
  say_which_attempt(logs, choice);
  bool over = world.job_is_over();
  Sources sources = print_attempt(logs, printer, over);
  printer.flush_tail();
  WaitingLines waiting;
  waiting.show(sources, printer);  // notes what is held now: shown at the next look if still held
  for (int polls = 1; !over; ++polls) {
    world.pause(pace.poll);
    const bool ask = polls % pace.status_every_polls == 0;
    if (ask && (over = world.job_is_over())) finish(sources);
    print_available(sources, printer);
    waiting.show(sources, printer);
    if (ask && !over && !choice.attempt) follow_a_restart(folder, choice, logs, sources, printer, waiting);
    printer.flush();
  }
}

}  // namespace dlaunch::cli
