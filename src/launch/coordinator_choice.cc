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

// --hang-timeout, --straggler-lag, --stack-timeout, and the log folder for reports.
rendezvous::ForensicsSettings forensics_settings(const LaunchConfig& config,
                                                const std::string& log_folder) {
  rendezvous::ForensicsSettings forensics;
  forensics.hang.hang_timeout = config.hang_timeout;
  forensics.hang.straggler_lag = config.straggler_lag;
  forensics.report_folder = log_folder;
  forensics.capture_timeout = config.stack_timeout;
  return forensics;
}

}  // namespace

std::unique_ptr<rendezvous::Coordinator> make_coordinator(const LaunchConfig& config,
                                                          process::SignalChannel& signals,
                                                          const std::string& host,
                                                          const std::string& log_folder) {
  const Topology& topology = config.topology;
  std::optional<int> port;
  if (topology.master_port) port = topology.master_port->value;
  if (topology.launchers() == 1)
    return std::make_unique<rendezvous::LocalCoordinator>(topology.master_addr.value, port,
                                              topology.nproc_per_node.value, topology.run_id.value,
                                              config.max_restarts, forensics_settings(config, log_folder));
  rendezvous::RendezvousSettings settings;
  settings.master_addr = topology.master_addr.value;
  settings.port = port.value_or(0);
  settings.node_rank = topology.node_rank.value;
  settings.job.nnodes = topology.nnodes.value;
  settings.job.spare_nodes = topology.spare_nodes.value;
  settings.job.min_nodes = config.min_nodes;
  settings.job.node_fail_limit = config.node_fail_limit;
  settings.nproc = topology.nproc_per_node.value;
  settings.host = host;
  settings.job.run_id = topology.run_id.value;
  settings.job.max_restarts = config.max_restarts;
  settings.job.join_timeout = config.rdzv_timeout;
  if (config.rdzv_token) settings.job.token = config.rdzv_token->value;
  settings.job.heartbeat_timeout = config.heartbeat_timeout;
  settings.allow_uneven = config.allow_uneven;
  settings.job.expected_hosts = topology.expected_hosts;
  settings.job.forensics = forensics_settings(config, log_folder);
  settings.job.gate.enabled = config.gate;
  settings.job.gate.timeout = config.gate_timeout;
  settings.records_check = records_check(log_folder);
  return rendezvous::make_rendezvous_coordinator(settings, signals);
}

}  // namespace dlaunch::launch
