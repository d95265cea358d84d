// What every node agreed on: ranks as prefix sums, and a failure in one line.
#include "wire/world.h"

#include <gtest/gtest.h>
#include <csignal>

#include <string>

namespace dlaunch::rendezvous {
namespace {

TEST(World, RanksArePrefixSumsOverTheNodes) {
  World world;
  world.nproc_per_node = {4, 2, 3};
  EXPECT_EQ(world.nnodes(), 3);
  EXPECT_EQ(world.world_size(), 9);
  EXPECT_EQ(world.rank_offset(0), 0);
  EXPECT_EQ(world.rank_offset(1), 4);
  EXPECT_EQ(world.rank_offset(2), 6);
  EXPECT_EQ(World{}.world_size(), 0);
}

TEST(World, AWorkersFailureInOneLine) {
  Failure failure;
  failure.global_rank = 3;
  failure.local_rank = 1;
  failure.node_rank = 1;
  failure.host = "node2";
  failure.exit_code = 3;
  EXPECT_EQ(describe_failure(failure), "rank 3 (local rank 1) on node2 (node 1) exited with code 3");
  failure.signal = SIGSEGV;
  failure.exit_code = 128 + SIGSEGV;
  EXPECT_EQ(describe_failure(failure),
            "rank 3 (local rank 1) on node2 (node 1) was killed by SIGSEGV (exit code 139)");
}

TEST(World, AFailureThatIsNotAWorkersIsItsDescription) {
  Failure failure;
  failure.node_rank = 2;
  failure.description = "the launcher of node 2 was lost";
  EXPECT_EQ(describe_failure(failure), "the launcher of node 2 was lost");
}

TEST(World, ALaunchersNodeRankComesFromItsSlot) {
  World world;
  world.nproc_per_node = {2, 2};
  world.node_slots = {0, 3};
  world.spare_slots = {1};
  EXPECT_EQ(world.node_rank_of(3), 1);
  EXPECT_EQ(world.node_rank_of(1), std::nullopt) << "a spare";
  World without_slots;  // one node alone, or a test's World
  without_slots.nproc_per_node = {2, 2};
  EXPECT_EQ(without_slots.node_rank_of(1), 1);
  EXPECT_EQ(without_slots.node_rank_of(2), std::nullopt);
  EXPECT_EQ(without_slots.node_rank_of(-1), std::nullopt);
}

}  // namespace
}  // namespace dlaunch::rendezvous
