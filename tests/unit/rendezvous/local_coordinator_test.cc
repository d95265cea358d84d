// The coordinator of a single-node job: the world it makes alone, and the
// verdict for its own round.
#include "rendezvous/local_coordinator.h"

#include <gtest/gtest.h>

#include <string>

#include "util/error.h"
#include "util/exit_codes.h"
#include "util/socket.h"

namespace dlaunch::rendezvous {
namespace {

NodeOutcome failed_worker() {
  NodeOutcome outcome;
  Failure failure;
  failure.global_rank = 0;
  failure.exit_code = 3;
  outcome.failure = failure;
  return outcome;
}

TEST(LocalCoordinator, TheWorldIsThisNodeAloneOnTheGivenPort) {
  util::Fd listener = util::listen_tcp(0);
  int port = util::bound_port(listener.get());
  listener.reset();
  LocalCoordinator coordinator("127.0.0.1", port, 4, "run-1", 0);
  World world = coordinator.join(2);
  EXPECT_EQ(world.round, 2);
  EXPECT_EQ(world.nproc_per_node, (std::vector<int>{4}));
  EXPECT_EQ(world.worker_master_addr, "127.0.0.1");
  EXPECT_EQ(world.worker_master_port, port);
  EXPECT_EQ(world.run_id, "run-1");
  EXPECT_EQ(coordinator.event_fd(), -1);
  EXPECT_EQ(coordinator.poll_stop_request(), std::nullopt);
}

TEST(LocalCoordinator, AGivenPortInUseIsRefusedBeforeWorkersStart) {
  util::Fd listener = util::listen_tcp(0);
  int port = util::bound_port(listener.get());
  LocalCoordinator coordinator("127.0.0.1", port, 1, "run-1", 0);
  try {
    coordinator.join(0);
    FAIL() << "a port in use was handed to the workers";
  } catch (const util::SystemError& error) {
    EXPECT_NE(std::string(error.what()).find("port " + std::to_string(port) + " for 127.0.0.1 is not free"),
              std::string::npos)
        << error.what();
  }
}

TEST(LocalCoordinator, WithoutAPortEachRoundGetsAFreeOne) {
  LocalCoordinator coordinator("127.0.0.1", std::nullopt, 1, "run-1", 0);
  int port = coordinator.join(0).worker_master_port;
  EXPECT_GT(port, 0);
  EXPECT_NO_THROW(util::listen_tcp(port));
}

TEST(LocalCoordinator, TheVerdictCountsTheRoundAgainstTheRestarts) {
  LocalCoordinator coordinator("127.0.0.1", std::nullopt, 2, "run-1", 1);
  coordinator.join(0);
  EXPECT_EQ(coordinator.finish(NodeOutcome{true, std::nullopt, 0, false, 0, std::nullopt}).kind, Verdict::Kind::kSucceeded);
  EXPECT_EQ(coordinator.finish(failed_worker()).kind, Verdict::Kind::kRestart);
  coordinator.join(1);  // the one restart is used
  Verdict last = coordinator.finish(failed_worker());
  EXPECT_EQ(last.kind, Verdict::Kind::kFailed);
  EXPECT_EQ(last.exit_code, 3);
  ASSERT_TRUE(last.failure);
  EXPECT_EQ(last.failure->exit_code, 3);
}

// A supervisor's progress, set by the test.
class FixedProgress : public ProgressSource {
 public:
  util::Clock::time_point last = util::Clock::now();
  std::vector<RankStep> steps_now;
  util::Clock::time_point last_progress() const override { return last; }
  std::vector<RankStep> steps() const override { return steps_now; }
};

// The repeated-failure rule weighs the steps the round reported before
// its tracker went: further along is progress, the same step is not.
TEST(LocalCoordinator, ARepeatedFailureStopsUnlessTheRoundGotFurther) {
  LocalCoordinator coordinator("127.0.0.1", std::nullopt, 2, "run-1", 5);
  FixedProgress progress;
  auto round_reaching = [&](int round, std::int64_t step) {
    coordinator.join(round);
    progress.steps_now = {{0, step}, {1, step - 1}};
    coordinator.watch_progress(&progress);
    coordinator.watch_progress(nullptr);
    return coordinator.finish(failed_worker());
  };
  EXPECT_EQ(round_reaching(0, 100).kind, Verdict::Kind::kRestart);
  EXPECT_EQ(round_reaching(1, 200).kind, Verdict::Kind::kRestart) << "step 200 is further than 100";
  Verdict stopped = round_reaching(2, 200);
  EXPECT_EQ(stopped.kind, Verdict::Kind::kFailed);
  EXPECT_EQ(stopped.exit_code, util::kExitDeterministic);
  EXPECT_NE(stopped.not_restarted.find("(step 200, then step 200)"), std::string::npos) << stopped.not_restarted;
}

ForensicsSettings hang_after(std::chrono::milliseconds timeout, std::vector<std::string>* lines,
                             const std::string& folder = "") {
  ForensicsSettings forensics;
  forensics.hang.hang_timeout = timeout;
  forensics.report_folder = folder;
  forensics.log = [lines](const std::string& line) { lines->push_back(line); };
  return forensics;
}

TEST(LocalCoordinator, AHangAsksForStacksOnceThenStopsTheRoundAsAFailure) {
  std::vector<std::string> lines;
  LocalCoordinator coordinator("127.0.0.1", std::nullopt, 2, "run-1", 3,
                               hang_after(std::chrono::milliseconds(1), &lines));
  coordinator.join(0);
  FixedProgress progress;
  progress.last = util::Clock::now() - std::chrono::seconds(5);
  coordinator.watch_progress(&progress);  // the round's start counts as progress
  auto due = coordinator.next_deadline();
  ASSERT_TRUE(due);
  while (util::Clock::now() <= *due) {
  }
  auto request = coordinator.poll_capture_request();
  ASSERT_TRUE(request);
  EXPECT_TRUE(request->hang);
  EXPECT_FALSE(coordinator.poll_capture_request());  // one capture per hang
  EXPECT_FALSE(coordinator.poll_stop_request());     // nothing stops before the stacks are in
  forensics::WorkerStacks stuck;
  stuck.rank = 1;
  stuck.host = "h";
  coordinator.deliver_stacks(*request, {stuck});
  auto reason = coordinator.poll_stop_request();
  ASSERT_TRUE(reason);
  EXPECT_EQ(reason->rfind("hang: no progress for", 0), 0u) << *reason;
  NodeOutcome stopped;  // the workers exited on SIGTERM: no failure of their own
  Verdict verdict = coordinator.finish(stopped);
  ASSERT_TRUE(verdict.failure);
  EXPECT_EQ(verdict.failure->exit_code, util::kExitHang);
  EXPECT_EQ(verdict.kind, Verdict::Kind::kRestart);  // restarts left: a hang is a failure like any
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines[0].find("capturing every worker's stack"), std::string::npos);
}

TEST(LocalCoordinator, ProgressPostponesTheHangAndNoTimeoutMeansNoDeadline) {
  std::vector<std::string> lines;
  LocalCoordinator coordinator("127.0.0.1", std::nullopt, 1, "run-1", 0,
                               hang_after(std::chrono::seconds(60), &lines));
  coordinator.join(0);
  FixedProgress progress;
  coordinator.watch_progress(&progress);
  EXPECT_FALSE(coordinator.poll_capture_request());
  auto due = coordinator.next_deadline();
  ASSERT_TRUE(due);
  EXPECT_GT(*due, util::Clock::now() + std::chrono::seconds(50));
  LocalCoordinator plain("127.0.0.1", std::nullopt, 1, "run-1", 0);
  plain.join(0);
  plain.watch_progress(&progress);
  EXPECT_FALSE(plain.next_deadline());
  EXPECT_FALSE(plain.poll_capture_request());
}

}  // namespace
}  // namespace dlaunch::rendezvous
