#include "rendezvous/verdict.h"

#include <algorithm>

namespace dlaunch::rendezvous {

Verdict decide_verdict(const RoundEnd& end) {
  Verdict verdict;
  bool all_succeeded = std::all_of(end.outcomes.begin(), end.outcomes.end(),
                                   [](const NodeOutcome& outcome) { return outcome.succeeded; });
  if (all_succeeded) return verdict;
  verdict.failure = end.first_failure;
  verdict.exit_code = end.first_failure ? end.first_failure->exit_code : 1;
  if (verdict.exit_code == 0) verdict.exit_code = 1;  // a failed job never exits 0
  bool must_end = end.node_lost || std::any_of(end.outcomes.begin(), end.outcomes.end(),
                                               [](const NodeOutcome& outcome) {
                                                 return outcome.stop_signal != 0 || outcome.preempted;
                                               });
  bool restart = !must_end && end.round < end.max_restarts;
  verdict.kind = restart ? Verdict::Kind::kRestart : Verdict::Kind::kFailed;
  return verdict;
}

Verdict decide_verdict(const NodeOutcome& outcome, int round, int max_restarts) {
  return decide_verdict(RoundEnd{{outcome}, outcome.failure, false, round, max_restarts});
}

}  // namespace dlaunch::rendezvous
