// Node 0's rendezvous service: where every node's launcher meets.
//
// It runs on its own thread inside node 0's launcher. It greets each
// connection with a challenge, admits one Join per node that proves the
// job's token, checks that the nodes agree (version, node count, workers per
// node, preflight), publishes the World (with the workers' MASTER_PORT, a
// free port it picks on node 0), keeps a heartbeat with every node, relays
// the first failure as a Stop to every other node, gathers each node's
// outcome and sends one Verdict to all, so every launcher exits alike.
//
// Nothing a peer does can stop or stall it: sockets are non-blocking, what
// a slow reader has not taken waits in its own outbox, a connection that
// does not complete its join in time is dropped, and one that sends garbage,
// another version, another job or a wrong token is told why (when it can be)
// and dropped.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "util/fd.h"

namespace dlaunch::rendezvous {

struct ServerSettings {
  int nnodes = 1;
  std::string run_id;
  std::string worker_master_addr;  // MASTER_ADDR the workers will get
  int max_restarts = 0;
  std::chrono::milliseconds join_timeout{300'000};
  std::optional<std::string> token;  // nullopt: any launcher of the job may join
  std::chrono::milliseconds heartbeat_timeout{30'000};
  // How long a new connection may take to send its Join.
  std::chrono::milliseconds handshake_timeout{10'000};
  std::string dlaunch_version = DLAUNCH_VERSION;
  // Where the service logs refused peers and lost nodes (default: stderr).
  std::function<void(const std::string&)> log;
};

class RendezvousServer {
 public:
  // Serves on LISTENER (already bound) on a new thread.
  RendezvousServer(Fd listener, ServerSettings settings);
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
  Pipe wake_;
  std::thread thread_;
};

}  // namespace dlaunch::rendezvous
