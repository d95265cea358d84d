// The summary a user reads on stderr when a job ends badly.
#include "launch/failure_report.h"

#include <gtest/gtest.h>
#include <csignal>

#include <string>

namespace dlaunch::launch {
namespace {

rendezvous::Failure worker_failure() {
  rendezvous::Failure failure;
  failure.global_rank = 5;
  failure.local_rank = 1;
  failure.node_rank = 2;
  failure.host = "node3";
  failure.pid = 4242;
  failure.exit_code = 3;
  failure.time = "2026-12-03T10:00:00";
  failure.log_file = "/logs/rank5.log";
  failure.error_message = "CUDA out of memory";
  failure.last_lines = {"step 10", "Traceback (most recent call last):"};
  return failure;
}

rendezvous::Verdict failed_with(rendezvous::Failure failure, int exit_code) {
  rendezvous::Verdict verdict;
  verdict.kind = rendezvous::Verdict::Kind::kFailed;
  verdict.exit_code = exit_code;
  verdict.failure = std::move(failure);
  return verdict;
}

TEST(FailureReport, NamesTheFirstFailedWorkerWhereAndWhy) {
  EXPECT_EQ(format_failure_summary(failed_with(worker_failure(), 3), 0),
            "dlaunch: ==================== job failed ====================\n"
            "dlaunch: root cause: rank 5: CUDA out of memory\n"
            "dlaunch: first failure: rank 5 (local rank 1) on node3 (node 2) exited with code 3\n"
            "dlaunch:   rank        5 (local rank 1)\n"
            "dlaunch:   node        node3 (node rank 2)\n"
            "dlaunch:   pid         4242\n"
            "dlaunch:   exit code   3\n"
            "dlaunch:   time        2026-12-03T10:00:00\n"
            "dlaunch:   log file    /logs/rank5.log\n"
            "dlaunch:   error       CUDA out of memory\n"
            "dlaunch:   last lines:\n"
            "dlaunch:     | step 10\n"
            "dlaunch:     | Traceback (most recent call last):\n"
            "dlaunch: exit code 3\n");
}

TEST(FailureReport, AKilledWorkerShowsItsSignalInsteadOfAnExitCode) {
  rendezvous::Failure failure = worker_failure();
  failure.signal = SIGKILL;
  failure.exit_code = 128 + SIGKILL;
  std::string text = format_failure_summary(failed_with(failure, 137), 0);
  EXPECT_NE(text.find("was killed by SIGKILL (exit code 137)"), std::string::npos) << text;
  EXPECT_NE(text.find("dlaunch:   signal      SIGKILL (9)\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("dlaunch:   exit code   "), std::string::npos) << text;
  EXPECT_NE(text.find("dlaunch: exit code 137 (SIGKILL)\n"), std::string::npos) << text;
}

TEST(FailureReport, WithoutItsLastLinesARemoteWorkerPointsAtItsNodesLog) {
  rendezvous::Failure failure = worker_failure();
  failure.last_lines.clear();
  failure.time.clear();
  failure.log_file.clear();
  failure.error_message.clear();
  std::string remote = format_failure_summary(failed_with(failure, 3), 0);
  EXPECT_NE(remote.find("dlaunch:   its output is in the log of node 2\n"), std::string::npos)
      << remote;
  for (const char* absent : {"last lines", "time ", "log file", "error "})
    EXPECT_EQ(remote.find(absent), std::string::npos) << absent << " in " << remote;
  // On its own node the output was shown already: no pointer elsewhere.
  EXPECT_EQ(format_failure_summary(failed_with(failure, 3), 2).find("its output is in"),
            std::string::npos);
}

TEST(FailureReport, AFailureThatIsNotAWorkersIsDescribedAsSuch) {
  rendezvous::Failure lost;
  lost.node_rank = 1;
  lost.description = "node 1 (node2) was lost: no heartbeat for 30 s";
  std::string text = format_failure_summary(failed_with(lost, 1), 0);
  EXPECT_NE(text.find("dlaunch: first failure: node 1 (node2) was lost: no heartbeat for 30 s\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("rank        "), std::string::npos) << text;
  EXPECT_EQ(text.find("its output is in"), std::string::npos) << text;
  EXPECT_NE(text.find("dlaunch: exit code 1\n"), std::string::npos) << text;
}

TEST(FailureReport, AVerdictWithoutAFailureGivesOnlyTheExitCode) {
  rendezvous::Verdict verdict;
  verdict.kind = rendezvous::Verdict::Kind::kFailed;
  verdict.exit_code = 130;
  EXPECT_EQ(format_failure_summary(verdict, 0),
            "dlaunch: ==================== job failed ====================\n"
            "dlaunch: the job failed with exit code 130 (SIGINT)\n");
}

TEST(FailureReport, LeadsWithTheRootAndCountsTheCascade) {
  rendezvous::Failure failure = worker_failure();
  failure.error_message.clear();
  failure.last_lines = {"Traceback (most recent call last):", "  File \"/w/train.py\", line 12, in load_config",
                        "    raise ValueError(\"bad config\")", "ValueError: bad config"};
  auto verdict = failed_with(failure, 1);
  verdict.consequences = 3;
  std::string text = format_failure_summary(verdict, 0);
  EXPECT_NE(text.find("dlaunch: root cause: rank 5: ValueError at /w/train.py:12: bad config\n"
                      "dlaunch:   3 ranks failed as a consequence\n"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace dlaunch::launch
