// decide_verdict(): the one rule by which a round's end becomes the job's
// verdict, for one node, for node 0's service and for a node deciding alone.
#include "service/verdict.h"

#include <gtest/gtest.h>

#include "util/exit_codes.h"

namespace dlaunch::rendezvous {
namespace {

Failure worker_failure(int rank, int code) {
  Failure failure;
  failure.global_rank = rank;
  failure.node_rank = rank;
  failure.exit_code = code;
  return failure;
}

NodeOutcome succeeded() {
  NodeOutcome outcome;
  outcome.succeeded = true;
  return outcome;
}

NodeOutcome failed(int rank, int code) {
  NodeOutcome outcome;
  outcome.failure = worker_failure(rank, code);
  return outcome;
}

NodeOutcome stopped(int signal) {  // stopped by a launcher signal (Ctrl-C, scancel)
  NodeOutcome outcome;
  outcome.stop_signal = signal;
  outcome.failure = worker_failure(-1, 128 + signal);
  return outcome;
}

NodeOutcome preempted() {  // warned of preemption; its workers exited non-zero
  NodeOutcome outcome = failed(0, 1);
  outcome.preempted = true;
  return outcome;
}

NodeOutcome stopped_by_peer() {  // stopped because another node failed
  return NodeOutcome{};
}

struct Case {
  const char* what;
  RoundEnd end;
  Verdict::Kind kind;
  int exit_code;
  int failed_rank;  // the verdict's failure's global rank; -2: none
};

TEST(Verdict, OneRuleForEveryWayARoundEnds) {
  const std::vector<Case> cases = {
      {"every node succeeded", {{succeeded(), succeeded()}, std::nullopt, false, 0, 3},
       Verdict::Kind::kSucceeded, 0, -2},
      {"a worker failed, restarts left",
       {{stopped_by_peer(), failed(1, 3)}, worker_failure(1, 3), false, 0, 1}, Verdict::Kind::kRestart, 3, 1},
      {"a worker failed in the last allowed round",
       {{stopped_by_peer(), failed(1, 3)}, worker_failure(1, 3), false, 1, 1}, Verdict::Kind::kFailed, 3, 1},
      {"no restarts allowed", {{failed(0, 2)}, worker_failure(0, 2), false, 0, 0}, Verdict::Kind::kFailed, 2, 0},
      {"the first failure wins over a later one",
       {{failed(0, 9), failed(1, 3)}, worker_failure(1, 3), false, 0, 0}, Verdict::Kind::kFailed, 3, 1},
      {"a stop signal ends the job even with restarts left",
       {{stopped(15), stopped_by_peer()}, worker_failure(-1, 143), false, 0, 5}, Verdict::Kind::kFailed, 143, -1},
      {"a preemption warning ends the job even with restarts left",
       {{preempted(), stopped_by_peer()}, worker_failure(0, 1), false, 0, 5}, Verdict::Kind::kFailed, 1, 0},
      {"a lost node ends the job even with restarts left",
       {{stopped_by_peer(), failed(1, 1)}, worker_failure(1, 1), true, 0, 5}, Verdict::Kind::kFailed, 1, 1},
      {"a failure without a code never exits 0",
       {{stopped_by_peer()}, worker_failure(0, 0), false, 0, 0}, Verdict::Kind::kFailed, 1, 0},
      {"a failed round without any failure named exits 1",
       {{stopped_by_peer()}, std::nullopt, false, 0, 0}, Verdict::Kind::kFailed, 1, -2},
  };
  for (const Case& c : cases) {
    Verdict verdict = decide_verdict(c.end);
    EXPECT_EQ(verdict.kind, c.kind) << c.what;
    EXPECT_EQ(verdict.exit_code, c.exit_code) << c.what;
    if (c.failed_rank == -2) {
      EXPECT_FALSE(verdict.failure) << c.what;
    } else {
      ASSERT_TRUE(verdict.failure) << c.what;
      EXPECT_EQ(verdict.failure->global_rank, c.failed_rank) << c.what;
    }
  }
}

TEST(Verdict, OneNodeAloneFollowsTheSameRule) {
  EXPECT_EQ(decide_verdict(succeeded(), 0, 0).kind, Verdict::Kind::kSucceeded);
  EXPECT_EQ(decide_verdict(failed(0, 4), 0, 1).kind, Verdict::Kind::kRestart);
  EXPECT_EQ(decide_verdict(failed(0, 4), 1, 1).kind, Verdict::Kind::kFailed);
  EXPECT_EQ(decide_verdict(failed(0, 4), 1, 1).exit_code, 4);
  EXPECT_EQ(decide_verdict(stopped(2), 0, 3).kind, Verdict::Kind::kFailed);
  EXPECT_EQ(decide_verdict(stopped(2), 0, 3).exit_code, 130);
  EXPECT_EQ(decide_verdict(preempted(), 0, 3).kind, Verdict::Kind::kFailed);
}

// RoundEnd with a lost node and LEFT launchers to form the next round.
RoundEnd lost_node_end(int left, int min_nodes, int round = 0, int max_restarts = 3) {
  RoundEnd end{{stopped_by_peer(), failed(1, 1)}, worker_failure(1, 1), true, round, max_restarts};
  end.nodes_left = left;
  end.min_nodes = min_nodes;
  return end;
}

TEST(Verdict, ALostNodeRestartsWhileEnoughLaunchersAreLeft) {
  EXPECT_EQ(decide_verdict(lost_node_end(2, 2)).kind, Verdict::Kind::kRestart) << "a spare takes its place";
  EXPECT_EQ(decide_verdict(lost_node_end(1, 1)).kind, Verdict::Kind::kRestart) << "down to --min-nodes";
  Verdict ended = decide_verdict(lost_node_end(1, 2));
  EXPECT_EQ(ended.kind, Verdict::Kind::kFailed);
  EXPECT_EQ(ended.not_restarted, "no spare left: 1 node remains, and the job needs at least 2 (--min-nodes)");
  EXPECT_EQ(decide_verdict(lost_node_end(0, 0)).kind, Verdict::Kind::kFailed) << "nobody left";
  Verdict out_of_restarts = decide_verdict(lost_node_end(2, 2, 3, 3));
  EXPECT_EQ(out_of_restarts.kind, Verdict::Kind::kFailed);
  EXPECT_EQ(out_of_restarts.not_restarted, "") << "the restarts ran out, not the spares";
  EXPECT_EQ(decide_verdict(lost_node_end(-1, 1)).kind, Verdict::Kind::kFailed) << "unknown: as before spares";
}

TEST(Verdict, ARepeatedFailureEndsTheJobWithItsOwnCode) {
  RoundEnd end{{stopped_by_peer(), failed(1, 1)}, worker_failure(1, 1), false, 1, 5};
  end.repeated = "not retrying: the same ValueError at train.py:12 in attempts 0 and 1";
  Verdict verdict = decide_verdict(end);
  EXPECT_EQ(verdict.kind, Verdict::Kind::kFailed);
  EXPECT_EQ(verdict.exit_code, util::kExitDeterministic);
  EXPECT_EQ(verdict.not_restarted, *end.repeated);
  end.round = 5;  // out of restarts anyway: the failure's own code, as before
  EXPECT_EQ(decide_verdict(end).exit_code, 1);
}

TEST(Verdict, CountsTheCascadeBesideTheRoot) {
  NodeOutcome root = failed(1, 1);
  root.consequences = 1;  // its node's other worker was stopped
  NodeOutcome other = failed(2, 143);
  other.consequences = 1;
  RoundEnd end{{root, other}, worker_failure(1, 1), false, 0, 0};
  EXPECT_EQ(decide_verdict(end).consequences, 3) << "1 on the root's node, the other node's failure and its 1";
}

}  // namespace
}  // namespace dlaunch::rendezvous
