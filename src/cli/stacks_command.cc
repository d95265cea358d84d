#include "cli/stacks_command.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <iostream>

#include "cli/job_argument.h"
#include "cli/local_stacks.h"
#include "forensics/saved_report.h"
#include "jobs/job_lookup.h"
#include "jobs/run_folder.h"
#include "jobs/submission_record.h"
#include "launch/token_setting.h"
#include "process/signal_channel.h"
#include "rendezvous/stack_observer.h"
#include "slurm/job_id.h"
#include "util/command_line.h"
#include "util/command_line_spec.h"
#include "util/environment.h"
#include "util/error.h"
#include "util/local_time.h"
#include "util/strings.h"
#include "wire/service_endpoint.h"

namespace dlaunch::cli {
namespace {

namespace fs = std::filesystem;

// How long each tool may take on one worker of a run captured from here,
// as a launcher's own capture allows (forensics::CaptureSettings).
constexpr std::chrono::seconds kPerWorkerCapture{5};

struct StacksRequest {
  std::string job;        // a Slurm job id or a folder; "" with --master
  std::string master;     // HOST:PORT
  std::string token_file;
  std::string run_id;
  int timeout_s = 60;
  bool json = false;
  bool full = false;
};

// Where the job is and how to prove we belong to it.
struct JobTarget {
  rendezvous::ServiceEndpoint endpoint;
  std::optional<std::string> token;
  std::string folder;  // "" with --master: the report is printed, not saved
  // No rendezvous service (a single node's run): its workers on this host
  // are captured from here (cli/local_stacks.h).
  bool local = false;
  // The run ended: "FAILED with exit code 3 at ...". Nothing to capture.
  std::optional<std::string> ended;
};

// What was captured, from the service or from here.
struct Captured {
  std::string headline;
  std::vector<forensics::WorkerStacks> workers;
};

// The folder of JOB: a folder as given (a submission's, a --log-dir, the
// one dlaunch ssh names), else the job 'last' or an id names, looked up
// in the submission folders first and then through Slurm.
std::string folder_of_job(const std::string& job) {
  std::error_code error;
  if (fs::is_directory(job, error)) return job;
  if (job != "last" && !slurm::is_job_id(job))
    throw util::InputError(fmt::format("'{}' is neither a Slurm job id nor a folder. Give a job id, a dlaunch "
                                       "submit folder, a --log-dir, 'last', or --master HOST:PORT",
                                       job));
  jobs::FoundJob found = find_job_argument(job, "");
  if (!found.task) return found.record.folder;
  for (const auto& task : found.record.tasks)
    if (task.index == *found.task) return task.folder;
  throw util::InputError(fmt::format("job {} has no task {}", found.record.job_id, *found.task));
}

// The stack reports saved for the job in FOLDER: a hang's (in its run's
// log folder) and live captures' (in FOLDER).
std::vector<std::string> saved_reports(const std::string& folder) {
  std::vector<std::string> reports = jobs::saved_stack_reports(jobs::last_run_folder(folder));
  for (auto& report : jobs::saved_stack_reports(folder))
    if (std::find(reports.begin(), reports.end(), report) == reports.end()) reports.push_back(std::move(report));
  return reports;
}

std::string nothing_to_capture(const JobTarget& target) {
  auto reports = saved_reports(target.folder);
  std::string saved = reports.empty() ? fmt::format("It saved no stack report (a run with --hang-timeout saves "
                                                    "one in its log folder's stacks/ when it hangs)")
                                      : fmt::format("Stack reports it saved: {}", util::join(reports, ", "));
  return fmt::format("nothing to capture: the run in {} ended ({}). {}. 'dlaunch status {}' shows how it ended",
                     target.folder, *target.ended, saved, target.folder);
}

std::pair<std::string, int> split_master(const std::string& master) {
  auto colon = master.rfind(':');
  if (colon == std::string::npos || colon == 0)
    throw util::UsageError(fmt::format("--master '{}': expected HOST:PORT (e.g. node1:29500)", master));
  auto port = util::parse_int_in_range(master.substr(colon + 1), 1, 65535, "--master's port");
  return {master.substr(0, colon), static_cast<int>(port)};
}

std::optional<std::string> token_for(const StacksRequest& request, const std::string& folder) {
  if (!request.token_file.empty()) return launch::read_rdzv_token_file(request.token_file);
  if (!folder.empty() && fs::exists(fs::path(folder) / "rdzv.token"))
    return launch::read_rdzv_token_file((fs::path(folder) / "rdzv.token").string());
  if (auto token = util::Environment::from_process().get(launch::kTokenVariable)) return *token;
  return std::nullopt;
}

JobTarget find_target(const StacksRequest& request) {
  JobTarget target;
  if (!request.master.empty()) {
    auto [address, port] = split_master(request.master);
    target.endpoint.address = address;
    target.endpoint.port = port;
    target.endpoint.run_id = request.run_id;
    target.token = token_for(request, "");
    return target;
  }
  target.folder = folder_of_job(request.job);
  // A run that has its result is over, whatever rendezvous.json it left.
  if ((target.ended = jobs::run_ending(target.folder))) return target;
  auto endpoint = rendezvous::find_endpoint(target.folder);
  if (!endpoint) {
    target.local = true;
    return target;
  }
  target.endpoint = *endpoint;
  // A login node may not resolve the compute nodes' names: then the
  // address node 0 resolved it to.
  if (!endpoint->ip.empty() && rendezvous::numeric_address(endpoint->address, endpoint->port).empty())
    target.endpoint.address = endpoint->ip;
  if (!request.run_id.empty()) target.endpoint.run_id = request.run_id;
  target.token = token_for(request, target.folder);
  return target;
}

// Node 0 wants the job's token, and none was found: a --log-dir holds
// none (a submission folder and dlaunch ssh's own folder do).
std::string no_token_for(const JobTarget& target) {
  return fmt::format("node 0 of the job in {} ({}:{}) requires the job's token, and dlaunch stacks has none (no "
                     "rdzv.token in the folder, no --rdzv-token-file, no ${}). Give --rdzv-token-file FILE or "
                     "${}, or, for a dlaunch ssh job, the folder it named at its start (it holds the token)",
                     target.folder.empty() ? "--master" : target.folder, target.endpoint.address,
                     target.endpoint.port, launch::kTokenVariable, launch::kTokenVariable);
}

// Node 0's service gathers every node's stacks.
Captured ask_the_service(const JobTarget& target, const StacksRequest& request) {
  process::SignalChannel signals;
  rendezvous::ObserveSettings settings;
  settings.master_addr = target.endpoint.address;
  settings.port = target.endpoint.port;
  settings.token = target.token;
  settings.run_id = target.endpoint.run_id;
  settings.timeout = std::chrono::seconds(request.timeout_s);
  rendezvous::Observed observed;
  try {
    observed = rendezvous::observe_stacks(settings, signals);
  } catch (const util::InputError&) {
    if (target.token) throw;
    throw util::InputError(no_token_for(target));
  }
  if (observed.workers.empty()) return {observed.headline, {}};
  return {fmt::format("{} ({}:{}, {})", observed.headline, settings.master_addr, settings.port, util::local_time_now()),
          std::move(observed.workers)};
}

// A single node's run: its workers on this host, captured from here.
Captured capture_here(const JobTarget& target, const StacksRequest& request) {
  auto per_worker = std::min(kPerWorkerCapture, std::chrono::seconds(request.timeout_s));
  LocalCapture capture = capture_local_run(target.folder, per_worker);
  return {fmt::format("{} ({})", capture.headline, util::local_time_now()), std::move(capture.workers)};
}

void configure_stacks(CLI::App& app, StacksRequest& request) {
  app.description("Show where every rank of a running job is now: every worker's stack, Python and "
                  "native, ranks with the same stack grouped, outliers first. The job goes on.");
  util::set_usage(app, "dlaunch stacks [options] (JOB | --master HOST:PORT)");
  app.add_option("job", request.job,
                 "A Slurm job id, 'last', a dlaunch submit folder, a --log-dir of dlaunch run or dlaunch ssh, or "
                 "the folder dlaunch ssh names")
      ->type_name("JOB");
  app.add_option("--master", request.master, "HOST:PORT of node 0's rendezvous, for a job started by hand")
      ->group("Job")
      ->type_name("HOST:PORT");
  app.add_option("--rdzv-token-file", request.token_file,
                 "File holding the job's rendezvous secret (default: the folder's rdzv.token, else "
                 "$DLAUNCH_RDZV_TOKEN)")
      ->group("Job")
      ->type_name("FILE");
  app.add_option("--rdzv-id", request.run_id, "The job's run id (checked by node 0 when given)")
      ->group("Job")
      ->type_name("ID");
  app.add_option("--timeout", request.timeout_s, "Seconds to wait for the whole report (default 60)")
      ->group("Job")
      ->type_name("SECONDS")
      ->check(CLI::Range(1, 3600));
  app.add_flag("--json", request.json, "Print the report as JSON")->group("Output");
  app.add_flag("--full", request.full, "Print every rank's threads in full, not only the groups")->group("Output");
  util::finish_help(app, {
                             {"dlaunch stacks 12345", "the stacks of Slurm job 12345, grouped"},
                             {"dlaunch stacks slurm-outputs/20261203_101500 --full",
                              "a job by its submission folder, every rank's threads in full"},
                             {"dlaunch stacks logs",
                              "a run of 'dlaunch run --log-dir logs', on the host where it runs"},
                             {"dlaunch stacks --master node1:29500 --rdzv-token-file ~/job.token",
                              "a job started by hand with dlaunch run, by node 0's address"},
                             {"dlaunch stacks 12345 --json > stacks.json", "the report as JSON"},
                         });
}

}  // namespace

int stacks_command(const CommandArgs& args) {
  CLI::App app("dlaunch stacks", "dlaunch stacks");
  StacksRequest request;
  configure_stacks(app, request);
  if (!util::parse_command_line(app, args, "dlaunch stacks")) return 0;
  if (request.job.empty() && request.master.empty())
    throw util::UsageError("dlaunch stacks needs one of JOB (a Slurm job id or a folder) or --master HOST:PORT");
  if (!request.job.empty() && !request.master.empty())
    throw util::UsageError(fmt::format("dlaunch stacks got both JOB ('{}') and --master ('{}'); give JOB or "
                                       "--master HOST:PORT, not both",
                                       request.job, request.master));
  JobTarget target = find_target(request);
  if (target.ended) {
    std::cerr << "dlaunch stacks: " << nothing_to_capture(target) << "\n";
    return 1;
  }
  Captured observed = target.local ? capture_here(target, request) : ask_the_service(target, request);
  if (observed.workers.empty()) {
    std::cerr << "dlaunch stacks: nothing captured: " << observed.headline << "\n";
    return 1;
  }
  const std::string& headline = observed.headline;
  std::string folder = target.folder.empty() ? "" : target.folder;
  std::string stamp = util::local_time_now();
  std::erase(stamp, ':');  // a file name without colons
  auto saved = forensics::save_report(observed.workers, headline, folder, "live_" + stamp);
  if (request.json) {
    std::cout << forensics::report_json(saved.report, headline).dump(2, ' ', false,
                                                                     nlohmann::json::error_handler_t::replace)
              << "\n";
  } else if (request.full) {
    std::cout << forensics::full_report_text(saved.report, headline);
  } else {
    std::cout << headline << "\n";
    for (const auto& line : saved.lines) std::cout << line << "\n";
  }
  bool complete = true;
  for (const auto& worker : saved.report.workers) complete &= worker.problems.empty();
  return complete ? 0 : 1;
}

util::CommandLineSpec stacks_command_line() {
  CLI::App app("dlaunch stacks", "dlaunch stacks");
  StacksRequest request;
  configure_stacks(app, request);
  return util::describe_command_line(app);
}

}  // namespace dlaunch::cli
