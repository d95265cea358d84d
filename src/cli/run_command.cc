#include "cli/run_command.h"

#include "launch/launch_config.h"
#include "launch/launcher.h"
#include "launch/run_options.h"
#include "launch/run_record.h"
#include "launch/token_setting.h"
#include "rendezvous/local_coordinator.h"
#include "rendezvous/rendezvous_coordinator.h"
#include "util/bounded_call.h"
#include "util/process_secrets.h"

namespace dlaunch::cli {
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
        kRecordsReadLimit, [log_folder, place] { return launch::job_moved_on(log_folder, place); });
    return moved ? *moved : std::nullopt;
  };
}

// One node meets nobody; several meet at node 0's rendezvous.
rendezvous::ForensicsSettings forensics_settings(const launch::LaunchConfig& config,
                                                const std::string& log_folder) {
  rendezvous::ForensicsSettings forensics;
  forensics.hang.hang_timeout = config.hang_timeout;
  forensics.hang.straggler_lag = config.straggler_lag;
  forensics.report_folder = log_folder;
  forensics.capture_timeout = config.stack_timeout;
  return forensics;
}

std::unique_ptr<rendezvous::Coordinator> make_coordinator(const launch::LaunchConfig& config,
                                                          process::SignalChannel& signals,
                                                          const std::string& host,
                                                          const std::string& log_folder) {
  const launch::Topology& topology = config.topology;
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
  settings.nnodes = topology.nnodes.value;
  settings.spare_nodes = topology.spare_nodes.value;
  settings.min_nodes = config.min_nodes;
  settings.node_fail_limit = config.node_fail_limit;
  settings.nproc = topology.nproc_per_node.value;
  settings.host = host;
  settings.run_id = topology.run_id.value;
  settings.max_restarts = config.max_restarts;
  settings.timeout = config.rdzv_timeout;
  if (config.rdzv_token) settings.token = config.rdzv_token->value;
  settings.heartbeat_timeout = config.heartbeat_timeout;
  settings.allow_uneven = config.allow_uneven;
  settings.expected_hosts = topology.expected_hosts;
  settings.forensics = forensics_settings(config, log_folder);
  settings.gate.enabled = config.gate;
  settings.gate.timeout = config.gate_timeout;
  settings.records_check = records_check(log_folder);
  return rendezvous::make_rendezvous_coordinator(settings, signals);
}

}  // namespace

int run_command(const CommandArgs& args) {
  util::Environment environment = util::Environment::from_process();
  // The token is in the snapshot above; nothing the launcher starts (the
  // gate's check, the workers) inherits it, and no process of the user can
  // read it from this one (util/process_secrets.h).
  util::hide_process_memory();
  util::scrub_environment_variable(launch::kTokenVariable);
  // The command line as typed, with PET_* fallbacks.
  auto options = launch::parse_run_options(args, environment);
  if (!options) return 0;  // --help
  // Checked values: flags, then PET_*, then the Slurm step, then defaults.
  launch::LaunchConfig config = launch::resolve_launch_config(*options, environment);
  // Rendezvous, supervision, report, with the coordinator this job needs.
  return launch::run_launcher(config, environment,
                              [&](process::SignalChannel& signals, const std::string& host,
                                  const std::string& log_folder) {
                                return make_coordinator(config, signals, host, log_folder);
                              });
}

}  // namespace dlaunch::cli
