// How a round ends for the whole job: the one rule every coordinator
// applies (one node alone, node 0's service for many, a node that lost
// node 0 and decides alone), so every node acts alike.
#pragma once

#include <optional>
#include <vector>

#include "rendezvous/world.h"

namespace dlaunch::rendezvous {

// What is known when every node's workers of one round have exited.
struct RoundEnd {
  std::vector<NodeOutcome> outcomes;    // one per node
  std::optional<Failure> first_failure;  // the job's first failure, as it happened
  bool node_lost = false;                // a node (its launcher) is gone
  int round = 0;                         // 0 for the first run of the workers
  int max_restarts = 0;
};

// Succeeded when every node succeeded. Otherwise failed, with the first
// failure and its exit code (1 when it has none, or it is 0), or restarted
// when restarts are left and nothing says the job must end: no stop signal
// (Ctrl-C, SIGTERM, scancel), no preemption warning (the job is about to
// end anyway), no lost node (a restart could not form the same world).
Verdict decide_verdict(const RoundEnd& end);

// The rule for one node alone: its OUTCOME in ROUND with MAX_RESTARTS.
Verdict decide_verdict(const NodeOutcome& outcome, int round, int max_restarts);

}  // namespace dlaunch::rendezvous
