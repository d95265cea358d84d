// world_mismatch(): a launcher checks the World node 0 sends against its own
// settings before any worker starts (rendezvous/world_check.h).
#include "rendezvous/world_check.h"

#include <functional>
#include <gtest/gtest.h>

namespace dlaunch::rendezvous {
namespace {

World fitting_world() {
  World world;
  world.round = 1;
  world.nproc_per_node = {2, 2, 2};
  world.node_slots = {0, 1, 2};
  world.worker_master_addr = "node01";
  world.worker_master_port = 29400;
  world.run_id = "1234.0";
  world.heartbeat_timeout_ms = 30'000;
  return world;
}

// Node 1 of 3, 2 workers, round 1, job 1234.0.
WorldExpectation this_node() { return WorldExpectation{1, 3, 0, 1, 2, "1234.0", false}; }

TEST(WorldCheck, AWorldThatFitsPasses) {
  EXPECT_EQ(world_mismatch(fitting_world(), this_node()), std::nullopt);
  World uneven = fitting_world();
  uneven.nproc_per_node = {4, 2, 1};
  WorldExpectation allowed = this_node();
  allowed.allow_uneven = true;
  EXPECT_EQ(world_mismatch(uneven, allowed), std::nullopt);
}

TEST(WorldCheck, EveryFieldThatDoesNotFitIsNamed) {
  struct Case {
    const char* what;
    std::function<void(World&)> change;
    const char* expected;
  };
  const std::vector<Case> cases = {
      {"200 workers for a 2-worker node", [](World& w) { w.nproc_per_node = {2, 200, 2}; },
       "200 workers for this node (node 1), which runs 2 (--nproc-per-node)"},
      {"shorter than the job", [](World& w) { w.nproc_per_node = {2}; w.node_slots = {1}; },
       "1 nodes, but this node was started with 3 (--nnodes)"},
      {"longer than the job", [](World& w) { w.nproc_per_node.assign(5, 2); }, "5 nodes"},
      {"slots for fewer nodes", [](World& w) { w.node_slots = {0, 1}; }, "2 launcher slots for 3 nodes"},
      {"a slot beyond the job", [](World& w) { w.node_slots = {0, 1, 3}; },
       "launcher slot 3, but this job has slots 0 to 2"},
      {"a slot twice", [](World& w) { w.spare_slots = {2}; }, "launcher slot 2 twice"},
      {"no place for this launcher", [](World& w) { w.node_slots = {0, 2, 2}; }, "twice"},
      {"more addresses than launchers", [](World& w) { w.addresses.assign(4, "10.0.0.1"); },
       "4 launcher addresses for 3 launchers"},
      {"a newline in a launcher's address", [](World& w) { w.addresses = {"", "10.0.0.2\nrm -rf /", ""}; },
       "a launcher address: a worker MASTER_ADDR with spaces or control characters"},
      {"another run id", [](World& w) { w.run_id = "999.0"; }, "run id '999.0'"},
      {"an earlier round", [](World& w) { w.round = 0; }, "round 0, but this node joined round 1"},
      {"uneven without consent", [](World& w) { w.nproc_per_node = {3, 2, 2}; },
       "3 workers for node 0 but 2 for this node, without --allow-uneven"},
      {"zero workers elsewhere", [](World& w) { w.nproc_per_node = {0, 2, 2}; }, "0 workers for node 0"},
      {"port 0", [](World& w) { w.worker_master_port = 0; }, "MASTER_PORT 0"},
      {"port 70000", [](World& w) { w.worker_master_port = 70000; }, "MASTER_PORT 70000"},
      {"empty address", [](World& w) { w.worker_master_addr.clear(); }, "MASTER_ADDR of 0 bytes"},
      {"newline in address", [](World& w) { w.worker_master_addr = "node01\nexport X=1"; },
       "control characters"},
      {"huge address", [](World& w) { w.worker_master_addr.assign(300, 'a'); }, "300 bytes"},
      {"heartbeat 0", [](World& w) { w.heartbeat_timeout_ms = 0; }, "heartbeat timeout of 0 ms"},
      {"heartbeat negative", [](World& w) { w.heartbeat_timeout_ms = -5; }, "-5 ms"},
  };
  for (const auto& c : cases) {
    World world = fitting_world();
    c.change(world);
    auto problem = world_mismatch(world, this_node());
    ASSERT_TRUE(problem) << c.what;
    EXPECT_NE(problem->find(c.expected), std::string::npos) << c.what << ": " << *problem;
  }
}

TEST(WorldCheck, TooManyWorkersOnAnyNodeIsRefusedEvenWhenUneven) {
  World world = fitting_world();
  world.nproc_per_node = {kMostWorkersPerNode + 1, 2, 2};
  WorldExpectation allowed = this_node();
  allowed.allow_uneven = true;
  auto problem = world_mismatch(world, allowed);
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("expected 1 to 4096"), std::string::npos) << *problem;
}

// With spares (--nnodes 3, 2 spares): this launcher, slot 4, may train under
// any node rank, stand by, or be benched, in a World of 1 to 3 nodes.
TEST(WorldCheck, WithSparesALauncherFindsItsPlaceByItsSlot) {
  WorldExpectation spare = this_node();
  spare.spare_nodes = 2;
  spare.slot = 4;
  spare.min_nodes = 2;
  World world = fitting_world();
  world.spare_slots = {4};
  EXPECT_EQ(world_mismatch(world, spare), std::nullopt) << "standing by";
  world.node_slots = {0, 4, 2};
  world.spare_slots = {1, 3};
  EXPECT_EQ(world_mismatch(world, spare), std::nullopt) << "taking node rank 1";
  world.nproc_per_node = {2, 2};
  world.node_slots = {0, 4};
  world.spare_slots = {};
  world.benched_slots = {2};
  EXPECT_EQ(world_mismatch(world, spare), std::nullopt) << "a job shrunk to 2 nodes";
  world.node_slots = {0, 1};
  auto problem = world_mismatch(world, spare);
  ASSERT_TRUE(problem) << "a World that forgets this launcher";
  EXPECT_NE(problem->find("no place to this launcher (slot 4)"), std::string::npos) << *problem;
  world.nproc_per_node = {2};
  world.node_slots = {4};
  problem = world_mismatch(world, spare);
  ASSERT_TRUE(problem) << "fewer nodes than --min-nodes";
  EXPECT_NE(problem->find("and 2 (--min-nodes)"), std::string::npos) << *problem;
}

TEST(WorldCheck, ALauncherThatJoinedLateAcceptsALaterRound) {
  World world = fitting_world();
  world.round = 5;
  EXPECT_EQ(world_mismatch(world, this_node()), std::nullopt);
}

}  // namespace
}  // namespace dlaunch::rendezvous
