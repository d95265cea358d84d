// How a node's launcher agrees with the other nodes' launchers.
//
// One node (or --standalone) needs nobody: LocalCoordinator. Several nodes
// meet at node 0's rendezvous service: rendezvous/RendezvousCoordinator. The
// supervisor only sees this interface.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "rendezvous/world.h"
#include "util/error.h"

namespace dlaunch::rendezvous {

class Coordinator {
 public:
  virtual ~Coordinator() = default;

  // Blocks until every node has joined round ROUND and returns the world
  // they agreed on. Throws SystemError naming the missing nodes on timeout,
  // and Interrupted when the launcher is told to stop while waiting.
  virtual World join(int round) = 0;

  // A descriptor the supervisor watches while workers run (-1: none).
  virtual int event_fd() const = 0;
  // Called when event_fd() is readable or next_deadline() has passed.
  // Returns why this node must stop its workers (the job failed elsewhere,
  // node 0 was lost or went silent), or nullopt.
  virtual std::optional<std::string> poll_stop_request() = 0;

  // When poll_stop_request() is due even without an event (a heartbeat to
  // send, node 0's silence to notice); nullopt: never.
  virtual std::optional<std::chrono::steady_clock::time_point> next_deadline() const {
    return std::nullopt;
  }

  // This node cannot run its part: tells the other nodes PROBLEM so the job
  // stops at once instead of at the join timeout. Best effort; returns
  // when the others were told or could not be.
  virtual void report_preflight_failure(const std::string& problem) { (void)problem; }

  // Tells the other nodes at once that this node failed, so they stop.
  virtual void announce_failure(const Failure& failure) = 0;

  // After every local worker has exited: reports OUTCOME and blocks for
  // the job-wide verdict, identical on every node.
  virtual Verdict finish(const NodeOutcome& outcome) = 0;

  // For a launcher the World left without workers (a spare, a benched
  // node): keeps its heartbeat and blocks until the round's verdict.
  virtual Verdict stand_by() {
    throw util::SystemError("this launcher has no spare place to stand by in");
  }
};


}  // namespace dlaunch::rendezvous
