// Node 0's rendezvous service: where every node's launcher meets.
//
// It runs on its own thread inside node 0's launcher. It collects one Join
// per node, publishes the World (with the workers' MASTER_PORT, a free port
// it picks on node 0), relays the first failure as a Stop to every other
// node, gathers each node's outcome and sends one Verdict to all, so every
// launcher exits alike. A peer that sends garbage, speaks another version or
// belongs to another job is told why (when it can be) and dropped; it never
// stops the service.
#pragma once

#include <chrono>
#include <functional>
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

 private:
  class Loop;
  std::unique_ptr<Loop> loop_;
  Pipe wake_;
  std::thread thread_;
};

}  // namespace dlaunch::rendezvous
