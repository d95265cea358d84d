// dlaunch stacks of a single node's run, captured from this process.
#include "cli/local_stacks.h"

#include <fmt/format.h>

#include "forensics/stack_capture.h"
#include "jobs/live_workers.h"
#include "util/environment.h"
#include "util/error.h"
#include "util/ports.h"
#include "wire/service_endpoint.h"

namespace dlaunch::cli {
namespace {

std::vector<forensics::CaptureTarget> targets_of(const std::vector<jobs::LiveWorker>& workers,
                                                 const std::string& host) {
  std::vector<forensics::CaptureTarget> targets;
  for (const auto& worker : workers) {
    forensics::CaptureTarget target;
    target.pid = worker.pid;
    target.rank = worker.rank;
    target.local_rank = worker.local_rank;
    target.node_rank = worker.node_rank;
    target.host = host;
    targets.push_back(target);
  }
  return targets;
}

std::string nothing_runs_here(const std::string& log_folder) {
  return fmt::format("no worker of {} runs on this host, and it holds no {} (node 0's launcher writes one while a "
                     "multi-node job runs). A single-node dlaunch run answers no one: dlaunch stacks captures its "
                     "workers itself, on the host where they run, so run it there; if the run is between two "
                     "attempts, try again. 'dlaunch status {}' says what the folder shows",
                     log_folder, rendezvous::kEndpointFile, log_folder);
}

}  // namespace

LocalCapture capture_local_run(const std::string& log_folder, std::chrono::seconds per_worker) {
  auto live = jobs::find_live_workers(log_folder);
  if (live.empty()) throw util::InputError(nothing_runs_here(log_folder));
  const std::string host = util::local_host_name();
  forensics::CaptureSettings settings;
  settings.timeout = per_worker;
  settings.environment = util::Environment::from_process();
  LocalCapture capture;
  capture.workers = forensics::capture_stacks(targets_of(live, host), settings);
  capture.headline = fmt::format("live capture on {} of {}", host, jobs::describe_live_workers(live));
  return capture;
}

}  // namespace dlaunch::cli
