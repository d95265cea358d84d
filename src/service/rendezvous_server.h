// Node 0's rendezvous service: where every node's launcher meets.
//
// It runs on its own thread inside node 0's launcher. It greets each
// connection with a challenge, admits one Join per node that proves the
// job's token and proves its own possession of the token in the Welcome
// (after which every frame is sealed, wire/session.h), checks that the
// nodes agree (version, node count, workers per
// node, preflight), publishes the World (with the workers' MASTER_PORT, a
// free port it picks on node 0), keeps a heartbeat with every node, relays
// the first failure as a Stop to every other node, gathers each node's
// outcome and sends one Verdict to all, so every launcher exits alike.
//
// Nothing a peer does can stop or stall it: sockets are non-blocking, what
// a slow reader has not taken waits in its own outbox, a connection that
// has not proved itself within the handshake deadline is dropped, one that
// sends garbage, another version, another job or a wrong token is told why
// (when it can be) and dropped, and a flood of unproven connections makes
// room for new ones by closing the oldest unproven one, never a launcher
// that proved itself.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "hang/hang_watch.h"
#include "service/gate_step.h"
#include "service/waiting_status.h"
#include "util/fd.h"

namespace dlaunch::rendezvous {

// How long either end waits for the other's next handshake message: node 0
// for a connection's Join, a launcher for node 0's Challenge and Welcome.
inline constexpr std::chrono::milliseconds kDefaultHandshakeTimeout{5'000};

struct ServerSettings {
  int nnodes = 1;       // the training size
  // Launchers beyond nnodes that stand by to take a lost node's place.
  int spare_nodes = 0;
  // The fewest nodes the job goes on with once no spare is left
  // (--min-nodes; 0: nnodes, so a lost node without a spare ends the job).
  int min_nodes = 0;
  // A node whose workers fail first this many rounds in a row is benched
  // when another can take its place (0: never).
  int node_fail_limit = 2;
  int service_slot = 0;  // the slot of the launcher hosting this service: node rank 0

  // A service that took over from a lost node 0 (RendezvousCoordinator)
  // starts at FIRST_ROUND with the last World's node ranks, benched
  // launchers and timeline. Its first round starts once the training size
  // joined, or every launcher of EXPECTED did, or at GATHER_GRACE with
  // more than half of EXPECTED (fewer: this node is likely the one cut
  // off, and the job stops here so that it can go on elsewhere).
  int first_round = 0;
  std::vector<int> previous_members;
  std::vector<int> benched;
  std::vector<int> expected;
  std::chrono::milliseconds gather_grace{0};
  std::vector<std::string> timeline;
  // A take-over: when node 0 last showed life to the launcher taking over
  // (its last frame), where the job's down time counts from.
  std::optional<std::chrono::steady_clock::time_point> lost_node0_last_heard;
  // The job's incarnation (World::incarnation): round 0's service makes
  // one up when this is empty; a take-over keeps the last World's.
  std::string incarnation;
  std::string run_id;
  std::string worker_master_addr;  // MASTER_ADDR the workers will get
  // Probe and choose each host's interface before a round with new hosts.
  bool survey_network = true;
  GateSettings gate;
  int max_restarts = 0;
  std::chrono::milliseconds join_timeout{300'000};
  std::optional<std::string> token;  // nullopt: any launcher of the job may join
  std::chrono::milliseconds heartbeat_timeout{rendezvous::kDefaultHeartbeatTimeout};
  // How long a new connection may take to prove itself with its Join.
  std::chrono::milliseconds handshake_timeout{kDefaultHandshakeTimeout};
  // Unproven connections held at once; beyond it the oldest is closed.
  // 0: derived from the open-file limit (raised to its hard limit).
  std::size_t max_unproven = 0;
  std::string dlaunch_version = DLAUNCH_VERSION;
  // --hang-timeout, --straggler-lag, where stack reports are saved.
  ForensicsSettings forensics;
  // Where each slot's launcher is expected (Slurm's node list), so the
  // lines said while nodes are missing can name their hosts; empty: unknown.
  std::vector<std::string> expected_hosts;
  // When the service says whom it still waits for, while a round gathers.
  WaitingSchedule waiting_lines;
  // Where the service logs refused peers and lost nodes (default: the
  // launcher's stderr console sink, util/console.h, which never blocks).
  std::function<void(const std::string&)> log;
};

class RendezvousServer {
 public:
  // Serves on LISTENER (already bound) on a new thread.
  RendezvousServer(util::Fd listener, ServerSettings settings);
  // Stops the thread and closes every connection.
  ~RendezvousServer();
  RendezvousServer(const RendezvousServer&) = delete;
  RendezvousServer& operator=(const RendezvousServer&) = delete;

  // After the job was aborted: waits until every node has been told why,
  // or until DEADLINE. True when all were told.
  bool wait_until_all_told(std::chrono::steady_clock::time_point deadline);

 private:
  class Loop;
  std::unique_ptr<Loop> loop_;
  std::thread thread_;
};

}  // namespace dlaunch::rendezvous
