// The coordinator of a single-node job: the world it makes alone, and the
// verdict for its own round.
#include "rendezvous/local_coordinator.h"

#include <gtest/gtest.h>

#include <string>

#include "util/error.h"
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
  EXPECT_EQ(coordinator.finish(NodeOutcome{true, std::nullopt, 0, false}).kind, Verdict::Kind::kSucceeded);
  EXPECT_EQ(coordinator.finish(failed_worker()).kind, Verdict::Kind::kRestart);
  coordinator.join(1);  // the one restart is used
  Verdict last = coordinator.finish(failed_worker());
  EXPECT_EQ(last.kind, Verdict::Kind::kFailed);
  EXPECT_EQ(last.exit_code, 3);
  ASSERT_TRUE(last.failure);
  EXPECT_EQ(last.failure->exit_code, 3);
}

}  // namespace
}  // namespace dlaunch::rendezvous
