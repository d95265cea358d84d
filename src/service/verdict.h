// How a round ends for the whole job: the one rule every coordinator
// applies (one node alone, node 0's service for many, a node that lost
// node 0 and decides alone), so every node acts alike.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "wire/world.h"

namespace dlaunch::rendezvous {

// What is known when every node's workers of one round have exited.
struct RoundEnd {
  std::vector<NodeOutcome> outcomes;    // one per node
  std::optional<Failure> first_failure;  // the job's first failure, as it happened
  bool node_lost = false;                // a node (its launcher) is gone, or was benched
  int round = 0;                         // 0 for the first run of the workers
  int max_restarts = 0;
  // With a lost node: the launchers left to form the next round (training
  // nodes that remain, and spares), and the fewest the job may run on
  // (--min-nodes). -1: unknown, so a lost node ends the job.
  int nodes_left = -1;
  int min_nodes = 0;
  // Why the failure must not be restarted though restarts are left: it
  // repeats the previous attempt's with no progress (doctor/repeat_guard.h).
  std::optional<std::string> repeated = std::nullopt;
};

// Succeeded when every node succeeded. Otherwise failed, with the first
// failure and its exit code (1 when it has none, or it is 0), or restarted
// when restarts are left and nothing says the job must end: no stop signal
// (Ctrl-C, SIGTERM, scancel), no preemption warning (the job is about to
// end anyway), and no lost node unless enough launchers are left to take
// its place (spares, or fewer nodes down to --min-nodes). A REPEATED
// failure ends the job with util::kExitDeterministic.
Verdict decide_verdict(const RoundEnd& end);

// The rule for one node alone: its OUTCOME in ROUND with MAX_RESTARTS.
Verdict decide_verdict(const NodeOutcome& outcome, int round, int max_restarts);

}  // namespace dlaunch::rendezvous
