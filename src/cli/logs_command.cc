#include "cli/logs_command.h"

#include <CLI/CLI.hpp>
#include <deque>
#include <fmt/format.h>
#include <poll.h>
#include <regex.h>

#include "slurm/job_info.h"
#include "submit/job_lookup.h"
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
  app.add_option("job", args.job, "A Slurm job id (12, or 12_3 for one task of an array), a submission folder, or 'last'")
      ->required()
      ->type_name("JOB");
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
  app.add_option("--output-dir", args.output_dir, "Where to look for JOB's folder (default: slurm-outputs and "
                                                  "dlaunch.toml's output-dir)")
      ->group("Where")
      ->type_name("DIR");
  util::finish_help(app, {{"dlaunch logs last", "every rank's output of the newest job, merged in time order"},
                          {"dlaunch logs 12 --rank 3", "rank 3's output alone"},
                          {"dlaunch logs 12 --node 1 --tail 50", "the last 50 lines of node 1's ranks"},
                          {"dlaunch logs 12 --follow --grep 'loss|error'", "new lines about losses or errors, live"},
                          {"dlaunch logs 20_3 --attempt 0", "task 3 of sweep 20, its first attempt"}});
}

// A POSIX regular expression: glibc's matcher needs no recursion, so a long
// line from a worker cannot overflow the stack as std::regex's can.
class LineFilter {
 public:
  explicit LineFilter(const std::string& pattern) : active_(!pattern.empty()) {
    if (!active_) return;
    int error = ::regcomp(&regex_, pattern.c_str(), REG_EXTENDED | REG_NOSUB);
    if (error != 0) {
      char text[256];
      ::regerror(error, &regex_, text, sizeof(text));
      active_ = false;
      throw util::UsageError(fmt::format("--grep '{}': not a regular expression: {}", pattern, text));
    }
  }
  ~LineFilter() {
    if (active_) ::regfree(&regex_);
  }
  LineFilter(const LineFilter&) = delete;
  LineFilter& operator=(const LineFilter&) = delete;

  bool keeps(const std::string& line) const { return !active_ || ::regexec(&regex_, line.c_str(), 0, nullptr, 0) == 0; }

 private:
  bool active_;
  regex_t regex_{};
};

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
  submit::JobStatus status = submit::current_status(found.record);
  for (const auto& task : status.tasks)
    if (found.task && task.index == *found.task) return slurm::is_final_state(task.state) || task.state == "UNKNOWN";
  return slurm::is_final_state(status.state) || status.state == "UNKNOWN";
}

}  // namespace

int logs_command(const CommandArgs& raw) {
  CLI::App app(kDescription, "dlaunch logs");
  LogsArgs args;
  configure_app(app, args);
  if (!util::parse_command_line(app, raw, "dlaunch logs")) return 0;
  LineFilter filter(args.grep);
  submit::LogChoice choice;
  if (!args.ranks.empty()) choice.ranks = submit::parse_rank_list(args.ranks);
  if (args.node >= 0) choice.node = args.node;
  if (args.attempt >= 0) choice.attempt = args.attempt;
  std::optional<std::string> output_dir;
  if (!args.output_dir.empty()) output_dir = args.output_dir;
  auto found = submit::find_job(args.job, submit::submission_dirs(output_dir, util::Environment::from_process()));
  submit::AttemptLogs logs = submit::find_rank_logs(job_folder(found), choice);
  if (logs.attempts > 1 && !choice.attempt)
    fmt::print(stderr, "dlaunch: attempt {} of {} (the last; --attempt K shows another)\n", logs.attempt,
               logs.attempts);
  const bool prefixed = logs.ranks.size() > 1;
  auto sources = open_sources(logs);
  std::deque<std::string> kept;  // --tail's last lines
  bool tailing = args.tail >= 0;
  auto emit = [&](const submit::MergedLine& line) {
    if (!filter.keeps(line.text)) return;
    std::string text = prefixed ? fmt::format("[rank{}]:{}\n", line.rank, line.text) : line.text + "\n";
    if (!tailing) {
      std::fwrite(text.data(), 1, text.size(), stdout);
      return;
    }
    kept.push_back(std::move(text));
    if (kept.size() > static_cast<std::size_t>(args.tail)) kept.pop_front();
  };
  bool over = !args.follow || job_is_over(found);
  if (over)
    for (auto& source : sources) source->finish();
  submit::merge_available(sources, emit);
  for (const auto& text : kept) std::fwrite(text.data(), 1, text.size(), stdout);
  tailing = false;
  std::fflush(stdout);
  for (int polls = 1; !over; ++polls) {
    ::poll(nullptr, 0, kFollowPollMs);
    if (polls % kStatusEveryPolls == 0 && job_is_over(found)) {
      over = true;
      for (auto& source : sources) source->finish();
    }
    if (submit::merge_available(sources, emit) > 0 || over) std::fflush(stdout);
  }
  return 0;
}

util::CommandLineSpec logs_command_line() {
  CLI::App app(kDescription, "dlaunch logs");
  LogsArgs args;
  configure_app(app, args);
  return util::describe_command_line(app);
}

}  // namespace dlaunch::cli
