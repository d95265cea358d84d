#include "launch/coordinator_choice.h"

#include "launch/run_record.h"
#include "rendezvous/local_coordinator.h"
#include "rendezvous/rendezvous_coordinator.h"
#include "util/bounded_call.h"

namespace dlaunch::launch {
namespace {

// How long a launcher that lost node 0 reads the job's records at most: a
// shared file system that hangs (its server cut off with this node) must
// not hold up a take-over.
constexpr std::chrono::seconds kRecordsReadLimit(2);

// The job's records in LOG_FOLDER, read within kRecordsReadLimit
// (launch/run_record.h, job_moved_on).
rendezvous::JobRecordsCheck records_check(const std::string& log_folder) {
  return [log_folder](const rendezvous::LauncherPlace& place) -> std::optional<std::string> {
    auto moved = util::call_within<std::optional<std::string>>(
        kRecordsReadLimit, [log_folder, place] { return job_moved_on(log_folder, place); });
    return moved ? *moved : std::nullopt;
  };
}

}  // namespace

std::unique_ptr<rendezvous::Coordinator> make_coordinator(const LaunchConfig& config,
                                                          process::SignalChannel& signals,
                                                          const std::string& host,
                                                          const std::string& log_folder) {
  const Topology& topology = config.topology;
  std::optional<int> port;
  if (topology.master_port) port = topology.master_port->value;
  rendezvous::JobSettings job = config.job;
  job.forensics.report_folder = log_folder;
  if (topology.launchers() == 1)
    return std::make_unique<rendezvous::LocalCoordinator>(topology.master_addr.value, port,
                                                          topology.nproc_per_node.value, job.run_id,
                                                          job.max_restarts, job.forensics,
                                                          job.stop_repeated_failures);
  rendezvous::RendezvousSettings settings;
  settings.job = std::move(job);
  settings.master_addr = topology.master_addr.value;
  settings.port = port.value_or(0);
  settings.node_rank = topology.node_rank.value;
  settings.nproc = topology.nproc_per_node.value;
  settings.host = host;
  settings.allow_uneven = config.allow_uneven;
  settings.records_check = records_check(log_folder);
  return rendezvous::make_rendezvous_coordinator(settings, signals);
}

}  // namespace dlaunch::launch
