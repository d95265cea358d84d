#include "cli/jobs_command.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/command_parser.h"
#include "cli/job_argument.h"
#include "jobs/job_status.h"
#include "util/command_line.h"
#include "util/error.h"

namespace dlaunch::cli {
namespace {

constexpr const char* kJobsDescription =
    "List the jobs dlaunch submit made from here, newest first: state live from Slurm, or the final "
    "state recorded in the folder once Slurm forgot the job";

struct JobsRequest {
  std::string output_dir;
  int limit = 20;
  bool json = false;
};

void configure_jobs(CLI::App& app, JobsRequest& request) {
  util::set_usage(app, "dlaunch jobs [options]");
  add_output_dir_option(app, request.output_dir);
  util::add_count_option(app, "-n,--limit", request.limit, "Show the newest N submissions (0: all; default 20)",
                         "Output", "N", 1 << 30);
  app.add_flag("--json", request.json, "One JSON array: each job's id, name, state, counts, times, folder")
      ->group("Output");
  util::finish_help(app, {{"dlaunch jobs", "the 20 newest submissions made from this folder"},
                          {"dlaunch jobs --limit 0", "all of them"},
                          {"dlaunch jobs --output-dir /scratch/runs", "the submissions in another folder"},
                          {"dlaunch jobs --json | jq '.[0].state'", "the newest job's state, for scripts"}});
}

std::string nodes_text(const jobs::SubmissionRecord& record) {
  return fmt::format("{}x{}", record.nodes, record.gpus_per_node);
}

void print_table(const std::vector<std::pair<jobs::SubmissionRecord, jobs::JobStatus>>& jobs) {
  std::vector<std::vector<std::string>> rows = {
      {"JOB", "NAME", "STATE", "NODESxGPUS", "RESTARTS", "SUBMITTED", "ELAPSED", "FOLDER"}};
  for (const auto& [record, status] : jobs) {
    rows.push_back({record.job_id.empty() ? "-" : record.job_id, record.name, jobs::state_text(status),
                    nodes_text(record), std::to_string(status.restarts), record.submitted,
                    status.elapsed.empty() ? "-" : status.elapsed, record.folder});
  }
  std::vector<std::size_t> widths(rows.front().size(), 0);
  for (const auto& row : rows)
    for (std::size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i)
      line += i + 1 == row.size() ? row[i] : fmt::format("{:<{}}  ", row[i], widths[i]);
    fmt::print("{}\n", line);
  }
}

}  // namespace

int jobs_command(const CommandArgs& args) {
  std::optional<JobsRequest> parsed = parse_with(args, kJobsDescription, "dlaunch jobs", configure_jobs);
  if (!parsed) return 0;
  const JobsRequest& request = *parsed;
  auto dirs = submission_dirs_for(request.output_dir);
  std::vector<std::string> left_out;
  auto records = jobs::list_submissions(dirs, &left_out);
  // A damaged or planted folder is named, and the others are listed.
  for (const auto& why : left_out) fmt::print(stderr, "dlaunch: left out: {}\n", why);
  if (request.limit > 0 && records.size() > static_cast<std::size_t>(request.limit))
    records.resize(static_cast<std::size_t>(request.limit));
  std::vector<std::pair<jobs::SubmissionRecord, jobs::JobStatus>> jobs;
  for (auto& record : records) {
    jobs::JobStatus status = jobs::current_status(record);
    jobs.emplace_back(std::move(record), std::move(status));
  }
  if (request.json) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& [record, status] : jobs) list.push_back(jobs::status_json(record, status));
    fmt::print("{}\n", list.dump(2));
    return 0;
  }
  if (jobs.empty()) {
    fmt::print(stderr, "dlaunch: no submissions in {}\n", fmt::join(dirs, ", "));
    return 0;
  }
  print_table(jobs);
  return 0;
}

util::CommandLineSpec jobs_command_line() { return command_line_of(kJobsDescription, "dlaunch jobs", configure_jobs); }

}  // namespace dlaunch::cli
