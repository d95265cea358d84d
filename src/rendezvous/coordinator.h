// How a node's launcher agrees with the other nodes' launchers.
//
// One node (or --standalone) needs nobody: LocalCoordinator. Several nodes
// meet at node 0's rendezvous service: rendezvous/RendezvousCoordinator. The
// supervisor only sees this interface.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "forensics/stack_sample.h"
#include "hang/hang_watch.h"
#include "util/error.h"
#include "wire/progress.h"
#include "wire/world.h"

namespace dlaunch::rendezvous {

// What a round's supervisor knows of its workers' progress; the
// coordinator reads it when it reports (heartbeats) or judges a hang.
class ProgressSource {
 public:
  virtual ~ProgressSource() = default;
  virtual util::Clock::time_point last_progress() const = 0;
  virtual std::vector<RankStep> steps() const = 0;
};

// A capture of every worker's stack that the job wants from this node: on
// a hang, before anything is stopped, or for `dlaunch stacks`.
struct CaptureRequest {
  std::uint32_t id = 0;
  bool hang = false;
};

// This launcher is out of the job: node 0 dropped it while it was frozen
// or cut off and the job went on without it, or the job was decided
// without it, or (on node 0) the others moved the rendezvous on while it
// was frozen. Its workers are stale: they are killed at once, and it
// exits without acting for the job again (no take-over, no verdict of its
// own, none of the job's records). Thrown by finish() and stand_by(); the
// message is the one line the launcher says.
class Fenced : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// How a launcher lost node 0: its connection closed or was reset (node 0's
// host answered: its kernel lives and its network works), or it fell
// silent (a frozen, cut-off or powered-off host looks the same).
enum class NodeZeroLoss { kClosed, kSilent };

class Coordinator {
 public:
  virtual ~Coordinator() = default;

  // Blocks until every node has joined round ROUND and returns the world
  // they agreed on. Throws SystemError naming the missing nodes on timeout,
  // and Interrupted when the launcher is told to stop while waiting.
  virtual World join(int round) = 0;

  // This launcher's slot in the job (its node rank without spares): the
  // one it was given, or, when its node rank comes by arrival, the one node
  // 0's service gave it (-1 until then; fixed once a World came).
  virtual int slot() const = 0;

  // A descriptor the supervisor watches while workers run (-1: none).
  virtual int event_fd() const = 0;
  // Called when event_fd() is readable or next_deadline() has passed.
  // Returns why this node must stop its workers (the job failed elsewhere,
  // node 0 was lost or went silent), or nullopt.
  virtual std::optional<std::string> poll_stop_request() = 0;

  // After poll_stop_request() returned a reason: this launcher is fenced
  // (see Fenced), so its workers are killed at once rather than stopped.
  virtual bool fenced() const { return false; }

  // Every worker of this node's round has started (exec'd): node 0 counts
  // the job's down time to the moment all nodes' have.
  virtual void workers_started() {}

  // When poll_stop_request() is due even without an event (a heartbeat to
  // send, node 0's silence to notice); nullopt: never.
  virtual std::optional<std::chrono::steady_clock::time_point> next_deadline() const {
    return std::nullopt;
  }

  // This node cannot run its part: tells the other nodes PROBLEM so the job
  // stops at once instead of at the join timeout. Best effort; returns
  // when the others were told or could not be.
  virtual void report_preflight_failure(const std::string& problem) { (void)problem; }

  // This node failed a health check before the next round (PROBLEM, one
  // line; nullopt: it passed): the next join() tells node 0, which benches
  // it for a spare or stops the job naming it.
  virtual void report_health(const std::optional<std::string>& problem) { (void)problem; }

  // Between rounds, while this launcher checks its node (which may take
  // longer than --heartbeat-timeout): keeps the link to node 0 alive both
  // ways, so neither end takes the other for silent. Call it every few
  // hundred milliseconds; what node 0 sends meanwhile waits for join().
  virtual void keep_alive() {}

  // Tells the other nodes at once that this node failed, so they stop.
  virtual void announce_failure(const Failure& failure) = 0;

  // After every local worker has exited: reports OUTCOME and blocks for
  // the job-wide verdict, identical on every node.
  virtual Verdict finish(const NodeOutcome& outcome) = 0;

  // While a round's workers run: where this node's progress is (null when
  // the round ends).
  virtual void watch_progress(const ProgressSource* source) { (void)source; }
  // A capture this node must make now (polled with poll_stop_request).
  virtual std::optional<CaptureRequest> poll_capture_request() { return std::nullopt; }
  // The stacks of this node's workers for REQUEST.
  virtual void deliver_stacks(const CaptureRequest& request, const std::vector<forensics::WorkerStacks>& stacks) {
    (void)request;
    (void)stacks;
  }

  // How this launcher lost the job's first node 0 (slot 0's launcher; in a
  // Slurm job, on the batch host) after the World; nullopt: it did not.
  virtual std::optional<NodeZeroLoss> first_node0_loss() const { return std::nullopt; }

  // For a launcher the World left without workers (a spare, a benched
  // node): keeps its heartbeat and blocks until the round's verdict.
  virtual Verdict stand_by() {
    throw util::SystemError("this launcher has no spare place to stand by in");
  }
};


}  // namespace dlaunch::rendezvous
