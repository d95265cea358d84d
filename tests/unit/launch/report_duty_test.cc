// Who tells the user what at the end of a round: the failure summary once
// per job, not once per node.
#include "launch/report_duty.h"

#include <gtest/gtest.h>

#include <string>

namespace dlaunch::launch {
namespace {

rendezvous::Failure worker_failure(int node_rank, int global_rank) {
  rendezvous::Failure failure;
  failure.node_rank = node_rank;
  failure.global_rank = global_rank;
  failure.local_rank = 1;
  failure.host = "host" + std::to_string(node_rank);
  failure.pid = 1000 + global_rank;
  failure.exit_code = 3;
  return failure;
}

rendezvous::Verdict failed_with(rendezvous::Failure failure) {
  rendezvous::Verdict verdict;
  verdict.kind = rendezvous::Verdict::Kind::kFailed;
  verdict.exit_code = failure.exit_code;
  verdict.failure = std::move(failure);
  return verdict;
}

rendezvous::NodeOutcome failed_outcome(rendezvous::Failure failure) {
  rendezvous::NodeOutcome outcome;
  outcome.failure = std::move(failure);
  return outcome;
}

TEST(ReportDuty, OneNodeAloneSaysEverything) {
  rendezvous::Verdict verdict = failed_with(worker_failure(0, 1));
  EXPECT_TRUE(speaks_for_job(1, 0, verdict));
  EXPECT_TRUE(says_notices(1, 0));
}

TEST(ReportDuty, OfSeveralNodesOnlyNodeRankZeroSpeaksForTheJob) {
  rendezvous::Verdict verdict = failed_with(worker_failure(2, 5));
  EXPECT_TRUE(speaks_for_job(16, 0, verdict));
  for (int rank = 1; rank < 16; ++rank) EXPECT_FALSE(speaks_for_job(16, rank, verdict)) << rank;
  EXPECT_FALSE(speaks_for_job(16, std::nullopt, verdict));  // a spare
  EXPECT_TRUE(says_notices(16, 0));
  EXPECT_FALSE(says_notices(16, 3));
  EXPECT_FALSE(says_notices(16, std::nullopt));
}

TEST(ReportDuty, ALauncherThatDecidedAloneSpeaksForItselfSinceNode0MayBeGone) {
  rendezvous::Failure lost;
  lost.node_rank = 0;
  lost.description = "lost contact with the rendezvous on node 0 (n0:29500): its launcher exited or was killed";
  rendezvous::Verdict verdict = failed_with(lost);
  verdict.decided_here = true;
  EXPECT_TRUE(speaks_for_job(16, 5, verdict));
  EXPECT_TRUE(speaks_for_job(16, std::nullopt, verdict));
}

TEST(ReportDuty, ANodeWhoseFailureNode0NamesAddsNothing) {
  rendezvous::Failure failure = worker_failure(1, 3);
  rendezvous::Verdict verdict = failed_with(failure);
  failure.last_lines = {"Traceback"};  // its own account is richer than the announced copy
  EXPECT_EQ(own_failure_line(verdict, failed_outcome(failure), 1), std::nullopt);
  EXPECT_EQ(own_failure_line(verdict, rendezvous::NodeOutcome{}, 1), std::nullopt);  // stopped, not failed
}

TEST(ReportDuty, ANodeWhoseOwnWorkerFailedTooSaysItInOneLine) {
  rendezvous::Verdict verdict = failed_with(worker_failure(0, 0));
  EXPECT_EQ(own_failure_line(verdict, failed_outcome(worker_failure(1, 3)), 1),
            "dlaunch: node 1 also saw a failure: rank 3 (local rank 1) on host1 (node 1) exited with code 3 "
            "(node 0's summary names the job's first failure)");
}

TEST(ReportDuty, ALauncherToldToStopIsNoNews) {
  rendezvous::Failure stopped;
  stopped.node_rank = 1;
  stopped.signal = 15;
  stopped.description = "the launcher on host1 (node 1) received SIGTERM";
  rendezvous::NodeOutcome outcome = failed_outcome(stopped);
  outcome.stop_signal = 15;
  rendezvous::Failure first = stopped;
  first.node_rank = 0;
  first.description = "the launcher on host0 (node 0) received SIGTERM";
  EXPECT_EQ(own_failure_line(failed_with(first), outcome, 1), std::nullopt);
}

}  // namespace
}  // namespace dlaunch::launch
