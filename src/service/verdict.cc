#include "service/verdict.h"
#include "util/exit_codes.h"

#include <algorithm>
#include <fmt/format.h>

namespace dlaunch::rendezvous {

namespace {

// The failures beside the root: each node's own cascade, and each other
// node's failure.
int consequences_of(const RoundEnd& end) {
  int count = 0;
  for (const NodeOutcome& outcome : end.outcomes) {
    count += outcome.consequences;
    bool root = end.first_failure && outcome.failure &&
                outcome.failure->node_rank == end.first_failure->node_rank &&
                outcome.failure->global_rank == end.first_failure->global_rank;
    if (outcome.failure && !root && outcome.stop_signal == 0) ++count;
  }
  return count;
}

}  // namespace

Verdict decide_verdict(const RoundEnd& end) {
  Verdict verdict;
  bool all_succeeded = std::all_of(end.outcomes.begin(), end.outcomes.end(),
                                   [](const NodeOutcome& outcome) { return outcome.succeeded; });
  if (all_succeeded) return verdict;
  verdict.failure = end.first_failure;
  verdict.consequences = consequences_of(end);
  verdict.exit_code = end.first_failure ? end.first_failure->exit_code : util::kExitFailure;
  if (verdict.exit_code == 0) verdict.exit_code = util::kExitFailure;  // a failed job never exits 0
  bool told_to_end = std::any_of(end.outcomes.begin(), end.outcomes.end(), [](const NodeOutcome& outcome) {
    return outcome.stop_signal != 0 || outcome.preempted;
  });
  bool too_few_left = end.node_lost && (end.nodes_left < 0 || end.nodes_left < end.min_nodes ||
                                        end.nodes_left == 0);
  bool must_end = told_to_end || too_few_left;
  bool restart = !must_end && end.round < end.max_restarts;
  if (!told_to_end && too_few_left && end.nodes_left >= 0 && end.round < end.max_restarts)
    verdict.not_restarted = fmt::format(
        "no spare left: {} node{} remain{}, and the job needs at least {} (--min-nodes)", end.nodes_left,
        end.nodes_left == 1 ? "" : "s", end.nodes_left == 1 ? "s" : "", end.min_nodes);
  if (restart && end.repeated) {
    restart = false;
    verdict.not_restarted = *end.repeated;
    verdict.exit_code = util::kExitDeterministic;
  }
  verdict.kind = restart ? Verdict::Kind::kRestart : Verdict::Kind::kFailed;
  return verdict;
}

Verdict decide_verdict(const NodeOutcome& outcome, int round, int max_restarts) {
  return decide_verdict(RoundEnd{{outcome}, outcome.failure, false, round, max_restarts});
}

}  // namespace dlaunch::rendezvous
