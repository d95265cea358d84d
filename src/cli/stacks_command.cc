#include "cli/stacks_command.h"

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fmt/format.h>
#include <iostream>

#include "forensics/saved_report.h"
#include "launch/token_setting.h"
#include "process/signal_channel.h"
#include "rendezvous/stack_observer.h"
#include "submit/job_lookup.h"
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
};

bool all_digits(const std::string& text) {
  return !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
}

// A Slurm job's submission folder: where its log goes (dlaunch submit
// puts it in the folder), as scontrol reports it.
std::string folder_of_slurm_job(const std::string& job_id) {
  if (auto folder = submit::slurm_job_folder(job_id)) return *folder;
  throw util::InputError(fmt::format("Slurm does not know job {} (or shows no log folder for it). Give a "
                                     "running job's id, or its submission folder",
                                     job_id));
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
  target.folder = all_digits(request.job) ? folder_of_slurm_job(request.job) : request.job;
  std::error_code error;
  if (!fs::is_directory(target.folder, error))
    throw util::InputError(fmt::format("'{}' is neither a Slurm job id nor a folder. Give a job id, a "
                                       "dlaunch submit folder, a --log-dir, or --master HOST:PORT",
                                       request.job));
  auto endpoint = rendezvous::find_endpoint(target.folder);
  if (!endpoint)
    throw util::InputError(fmt::format("{} holds no {} (node 0's launcher writes it into its log folder "
                                       "while a multi-node job runs). Is this a dlaunch job that is still "
                                       "running? For a job started by hand give --master HOST:PORT",
                                       target.folder, rendezvous::kEndpointFile));
  target.endpoint = *endpoint;
  // A login node may not resolve the compute nodes' names: then the
  // address node 0 resolved it to.
  if (!endpoint->ip.empty() && rendezvous::numeric_address(endpoint->address, endpoint->port).empty())
    target.endpoint.address = endpoint->ip;
  if (!request.run_id.empty()) target.endpoint.run_id = request.run_id;
  target.token = token_for(request, target.folder);
  return target;
}

void configure(CLI::App& app, StacksRequest& request) {
  app.description("Show where every rank of a running job is now: every worker's stack, Python and "
                  "native, ranks with the same stack grouped, outliers first. The job goes on.");
  util::set_usage(app, "dlaunch stacks [options] (JOB | --master HOST:PORT)");
  app.add_option("job", request.job, "A Slurm job id, a dlaunch submit folder, or a --log-dir")->type_name("JOB");
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
                             {"dlaunch stacks --master node1:29500 --rdzv-token-file ~/job.token",
                              "a job started by hand with dlaunch run, by node 0's address"},
                             {"dlaunch stacks 12345 --json > stacks.json", "the report as JSON"},
                         });
}

}  // namespace

int stacks_command(const CommandArgs& args) {
  CLI::App app("dlaunch stacks", "dlaunch stacks");
  StacksRequest request;
  configure(app, request);
  if (!util::parse_command_line(app, args, "dlaunch stacks")) return 0;
  if (request.job.empty() == request.master.empty())
    throw util::UsageError("dlaunch stacks needs one of JOB (a Slurm job id or a folder) or --master HOST:PORT");
  JobTarget target = find_target(request);
  process::SignalChannel signals;
  rendezvous::ObserveSettings settings;
  settings.master_addr = target.endpoint.address;
  settings.port = target.endpoint.port;
  settings.token = target.token;
  settings.run_id = target.endpoint.run_id;
  settings.timeout = std::chrono::seconds(request.timeout_s);
  rendezvous::Observed observed = rendezvous::observe_stacks(settings, signals);
  if (observed.workers.empty()) {
    std::cerr << "dlaunch stacks: nothing captured: " << observed.headline << "\n";
    return 1;
  }
  std::string headline = fmt::format("{} ({}:{}, {})", observed.headline, settings.master_addr, settings.port,
                                     util::local_time_now());
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
  configure(app, request);
  return util::describe_command_line(app);
}

}  // namespace dlaunch::cli
