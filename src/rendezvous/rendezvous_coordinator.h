// The coordinator of a multi-node job: a client of node 0's rendezvous
// service (and, on node 0, the host of that service too).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "process/signal_channel.h"
#include "rendezvous/coordinator.h"
#include "service/rendezvous_server.h"
#include "service/waiting_status.h"

namespace dlaunch::rendezvous {

// Where a launcher stands in the job, for the job's shared records.
struct LauncherPlace {
  std::string incarnation;       // the job's (World::incarnation)
  int round = 0;                 // the last round this launcher was in
  std::optional<int> node_rank;  // its node rank in that round; nullopt: it stood by
  int slot = 0;
  std::string host;
};

// Asked by a launcher that lost node 0 before it acts for the job again
// (takes the rendezvous over, decides alone): do the job's records (in the
// shared log folder, launch/run_record.h) show that the job went on
// without it, or was decided? Returns the one line that says so, or
// nullopt. Must return within a few seconds, whatever the file system.
using JobRecordsCheck = std::function<std::optional<std::string>(const LauncherPlace& place)>;

struct RendezvousSettings {
  std::string master_addr;
  // Probe and choose each host's interface by reachability (node 0's).
  bool survey_network = true;
  GateSettings gate;  // node 0's --gate holds for the job
  int port = 0;
  int node_rank = 0;  // this launcher's slot: 0 to nnodes + spare_nodes - 1 (its node rank comes with each World)
  int nnodes = 2;     // the training size
  int spare_nodes = 0;
  // Node 0's service only (rendezvous_server.h): shrink down to, and bench after.
  int min_nodes = 0;  // 0: nnodes
  int node_fail_limit = 2;
  int nproc = 1;
  std::string host;
  std::string run_id;
  int max_restarts = 0;
  std::chrono::milliseconds timeout{300'000};
  std::optional<std::string> token;  // the job's rendezvous secret; nullopt: none
  // Node 0's value is the job's: the others adopt it from the challenge.
  std::chrono::milliseconds heartbeat_timeout{rendezvous::kDefaultHeartbeatTimeout};
  bool allow_uneven = false;
  // How long each end waits for the other's next handshake message.
  std::chrono::milliseconds handshake_timeout{5'000};
  // --hang-timeout and --straggler-lag (node 0's service judges; every
  // launcher reports its progress while they are set), stack captures.
  ForensicsSettings forensics;
  // Where a launcher says what it met while dialling node 0 (a silent
  // listener, a peer that did not prove the token) and that it still
  // waits; default: stderr.
  std::function<void(const std::string&)> notice;
  // Where each slot's launcher is expected (Slurm's node list, by slot), so
  // node 0 can name the hosts of missing nodes; empty: unknown.
  std::vector<std::string> expected_hosts;
  // How often a waiting launcher says so: node 0 naming whom it waits for,
  // the others while they cannot reach node 0 (service/waiting_status.h).
  WaitingSchedule waiting_lines;
  // The job's records, read before a launcher that lost node 0 acts for
  // the job again; null: none are kept (no shared log folder).
  JobRecordsCheck records_check;
};

// On node 0, binds SETTINGS.port first (throws SystemError naming the port
// when it is taken) and starts the service. SIGNALS lets waits end early
// when the launcher is told to stop. With a token, node 0 must prove it
// holds it before the launcher believes anything it says
// (rendezvous/service_dialer.h), and every World is checked against these
// settings before a worker starts (rendezvous/world_check.h).
std::unique_ptr<Coordinator> make_rendezvous_coordinator(const RendezvousSettings& settings,
                                                         process::SignalChannel& signals);

}  // namespace dlaunch::rendezvous
