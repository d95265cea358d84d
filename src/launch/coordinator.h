// How a node's launcher agrees with the other nodes' launchers.
//
// One node (or --standalone) needs nobody: LocalCoordinator. Several nodes
// meet at node 0's rendezvous service: rendezvous/RendezvousCoordinator. The
// supervisor only sees this interface.
#pragma once

#include <optional>
#include <string>

#include "launch/world.h"

namespace dlaunch {

class Coordinator {
 public:
  virtual ~Coordinator() = default;

  // Blocks until every node has joined round ROUND and returns the world
  // they agreed on. Throws SystemError naming the missing nodes on timeout,
  // and Interrupted when the launcher is told to stop while waiting.
  virtual World join(int round) = 0;

  // A descriptor the supervisor watches while workers run (-1: none).
  virtual int event_fd() const = 0;
  // Called when event_fd() is readable. Returns why this node must stop
  // its workers (the job failed elsewhere, node 0 was lost), or nullopt.
  virtual std::optional<std::string> poll_stop_request() = 0;

  // Tells the other nodes at once that this node failed, so they stop.
  virtual void announce_failure(const Failure& failure) = 0;

  // After every local worker has exited: reports OUTCOME and blocks for
  // the job-wide verdict, identical on every node.
  virtual Verdict finish(const NodeOutcome& outcome) = 0;
};

// The launcher was told to stop (SIGINT, SIGTERM, ...) outside supervision.
struct Interrupted {
  int signal;
};

}  // namespace dlaunch
