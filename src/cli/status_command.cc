#include "cli/status_command.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/command_parser.h"
#include "cli/job_argument.h"
#include "jobs/job_status.h"
#include "util/command_line.h"
#include "util/error.h"
#include "util/exit_codes.h"
#include "util/strings.h"

namespace dlaunch::cli {
namespace {

constexpr const char* kStatusDescription =
    "Show a submitted job, or a run by its --log-dir: state and reason, elapsed and time limit, nodes, "
    "restarts and requeues, the job's timeline (nodes lost and how, spares that took their place), and the "
    "failure summary if it failed";

struct StatusRequest {
  std::string job;
  std::string output_dir;
  bool json = false;
};

void configure_status(CLI::App& app, StatusRequest& request) {
  util::set_usage(app, "dlaunch status [options] JOB");
  add_job_argument(app, request.job, request.output_dir);
  app.add_flag("--json", request.json, "One JSON object (the fields of the text, and each task's)")->group("Output");
  util::finish_help(app, {{"dlaunch status last", "the newest submission made from here"},
                          {"dlaunch status 12", "job 12, found in slurm-outputs/ or through Slurm"},
                          {"dlaunch status slurm-outputs/20261203_140509", "the job of that folder"},
                          {"dlaunch status logs", "the run of 'dlaunch run --log-dir logs ...'"},
                          {"dlaunch status 12 --json | jq -r .state", "its state, for scripts"}});
}

std::string values_text(const std::map<std::string, std::string>& values) {
  std::vector<std::string> parts;
  for (const auto& [name, value] : values) parts.push_back(name + "=" + value);
  return util::join(parts, " ");
}

void print_task(const jobs::ArrayTask& task) {
  std::string values = task.values.empty() ? "" : fmt::format(" ({})", values_text(task.values));
  std::string code = task.exit_code ? fmt::format(", exit {}", *task.exit_code) : "";
  std::string reason = task.reason.empty() ? "" : fmt::format(" [{}]", task.reason);
  fmt::print("  task {}{}: {}{}{}  {}\n", task.index, values, task.state, code, reason, task.folder);
}

void print_row(const char* label, const std::string& value) {
  if (!value.empty()) fmt::print("  {:<10} {}\n", label, value);
}

// A run's --log-dir: what it holds, without Slurm's rows.
void print_run_rows(const jobs::SubmissionRecord& record, const jobs::JobStatus& status) {
  fmt::print("run in {} (a --log-dir of dlaunch run, no Slurm job): {}\n", record.folder, jobs::state_text(status));
  print_row("from:", status.source);
  print_row("elapsed:", status.elapsed);
  if (record.gpus_per_node > 0)
    print_row("nodes:", fmt::format("{} x {} worker(s)", record.nodes, record.gpus_per_node));
  print_row("restarts:", std::to_string(status.restarts));
  print_row("started:", record.submitted);
}

void print_submission_rows(const jobs::SubmissionRecord& record, const jobs::JobStatus& status) {
  if (record.never_submitted)
    fmt::print("{} ({}: no Slurm job id): {}\n", record.name,
               record.never_submitted->may_be_queued ? "sbatch printed no job id" : "never submitted", status.state);
  else if (record.job_id.empty())
    fmt::print("{} (run with --srun, no Slurm job id): {}\n", record.name, jobs::state_text(status));
  else
    fmt::print("job {} ({}): {}\n", record.job_id, record.name, jobs::state_text(status));
  print_row("reason:", status.reason);
  print_row("from:", status.source);
  // Decided, while Slurm still runs or cleans up the job (a lost node's).
  if (status.verdict && !jobs::has_ended(status))
    print_row("verdict:", fmt::format("{} (exit {}), decided by the launcher on {}; Slurm is still ending the job",
                                      status.verdict->state, status.verdict->exit_code,
                                      status.verdict->written_by.empty() ? "node 0" : status.verdict->written_by));
  std::string elapsed = status.elapsed;
  if (!status.time_limit.empty() && !elapsed.empty()) elapsed += " of " + status.time_limit;
  print_row("elapsed:", elapsed);
  print_row("nodes:", fmt::format("{} x {} GPU(s){}", record.nodes, record.gpus_per_node,
                                  status.node_list.empty() ? "" : ": " + status.node_list));
  print_row("restarts:", fmt::format("{} (dlaunch run), requeues: {} (Slurm)", status.restarts, status.requeues));
  print_row("submitted:", record.submitted);
  print_row("folder:", record.folder);
  print_row("command:", util::join(record.command, " "));
  if (!status.tasks.empty()) {
    fmt::print("tasks:\n");
    for (const auto& task : status.tasks) print_task(task);
  }
}

// The root failure first, and how many ranks it took with them: the line
// a user wants before the whole summary (result.json's "root").
void print_root(const nlohmann::json& root) {
  auto summary = root.is_object() ? root.find("summary") : root.end();
  if (!root.is_object() || summary == root.end() || !summary->is_string()) return;
  fmt::print("root cause: {}\n", summary->get<std::string>());
  auto consequences = root.find("consequences");
  if (consequences != root.end() && consequences->is_number_integer() && consequences->get<int>() > 0)
    fmt::print("  {} rank{} failed as a consequence\n", consequences->get<int>(),
               consequences->get<int>() == 1 ? "" : "s");
}

void print_status(const jobs::SubmissionRecord& record, const jobs::JobStatus& status) {
  if (record.run_log_dir) print_run_rows(record, status);
  else print_submission_rows(record, status);
  // Nodes lost and how, who took their place, how long the job was down.
  if (status.verdict && !status.verdict->timeline.empty()) {
    fmt::print("timeline:\n");
    for (const auto& event : status.verdict->timeline) fmt::print("  {}\n", event);
  }
  print_root(status.root);
  if (!status.failure_summary.empty()) fmt::print("failure:\n{}\n", status.failure_summary);
  else if (!status.failure.empty()) fmt::print("failure: {}\n", status.failure);
  // A launcher that decided alone and saw otherwise: the other side of a cut.
  if (status.verdict && !status.verdict->also_seen.empty()) {
    fmt::print("also seen:\n");
    for (const auto& line : status.verdict->also_seen) fmt::print("  {}\n", line);
  }
}

}  // namespace

int status_command(const CommandArgs& args) {
  std::optional<StatusRequest> parsed = parse_with(args, kStatusDescription, "dlaunch status", configure_status);
  if (!parsed) return 0;
  const StatusRequest& request = *parsed;
  auto found = find_job_argument(request.job, request.output_dir);
  jobs::JobStatus status = jobs::current_status(found.record);
  if (found.task) {
    std::erase_if(status.tasks, [&](const auto& task) { return task.index != *found.task; });
    if (status.tasks.empty())
      throw util::InputError(fmt::format("job {} has no task {}", found.record.job_id, *found.task));
  }
  if (request.json) fmt::print("{}\n", jobs::status_json(found.record, status).dump(2));
  else print_status(found.record, status);
  // A job sbatch refused is no job: scripts that ask for it must not go on.
  return status.state == jobs::kNotSubmittedState ? util::kExitFailure : util::kExitSuccess;
}

util::CommandLineSpec status_command_line() { return command_line_of(kStatusDescription, "dlaunch status", configure_status); }

}  // namespace dlaunch::cli
