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

#include "service/job_settings.h"
#include "util/fd.h"

namespace dlaunch::rendezvous {

struct ServerSettings {
  JobSettings job;       // what every launcher of the job was given
  int service_slot = 0;  // the slot of the launcher hosting this service: node rank 0
  std::string worker_master_addr;  // MASTER_ADDR the workers will get

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
  // Unproven connections held at once; beyond it the oldest is closed.
  // 0: derived from the open-file limit (raised to its hard limit).
  std::size_t max_unproven = 0;
  std::string dlaunch_version = DLAUNCH_VERSION;
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
