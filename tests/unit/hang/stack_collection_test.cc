#include "hang/stack_collection.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace dlaunch::rendezvous {
namespace {

std::map<int, AskedNode> two_nodes() {
  return {{0, AskedNode{"node1", 0, 2}}, {1, AskedNode{"node2", 2, 2}}};
}

std::string stacks_of(std::vector<int> ranks) {
  std::vector<forensics::WorkerStacks> workers;
  for (int rank : ranks) {
    forensics::WorkerStacks worker;
    worker.rank = rank;
    worker.host = "claimed";
    forensics::ThreadStack thread;
    thread.main_thread = true;
    thread.frames.push_back({fmt::format("f{}", rank), "x.py", 1, ""});
    worker.python_threads.push_back(thread);
    workers.push_back(worker);
  }
  return forensics::encode_worker_stacks(workers);
}

TEST(StackCollection, CompleteOnceEveryNodeAnsweredOnce) {
  StackCollection collection(1, true, "hang", two_nodes(), util::Clock::now());
  EXPECT_FALSE(collection.complete());
  EXPECT_TRUE(collection.take(0, stacks_of({0, 1})));
  EXPECT_FALSE(collection.take(0, stacks_of({0, 1})));  // twice
  EXPECT_FALSE(collection.take(5, stacks_of({})));      // never asked
  EXPECT_TRUE(collection.take(1, stacks_of({2, 3})));
  EXPECT_TRUE(collection.complete());
  auto workers = collection.workers();
  ASSERT_EQ(workers.size(), 4u);
  EXPECT_EQ(workers[2].host, "node2");  // node 0's name for it, not the node's claim
  EXPECT_EQ(workers[2].node_rank, 1);
}

TEST(StackCollection, ANodeSpeaksOnlyForItsOwnRanks) {
  StackCollection collection(1, false, "live", two_nodes(), util::Clock::now());
  collection.take(1, stacks_of({0, 2}));  // rank 0 is node 0's
  auto by_node = collection.workers_by_node();
  ASSERT_EQ(by_node[1].size(), 2u);
  EXPECT_EQ(by_node[1][0].rank, 2);
  EXPECT_EQ(by_node[1][1].rank, 3);
  EXPECT_EQ(by_node[1][1].problems.at(0), "its node sent no stack for it (the worker had exited)");
}

TEST(StackCollection, MissingGarbledAndLostNodesKeepTheirRanksWithTheReason) {
  StackCollection collection(1, true, "hang", two_nodes(), util::Clock::now());
  collection.take(0, "{not json");
  auto workers = collection.workers();
  ASSERT_EQ(workers.size(), 4u);
  EXPECT_NE(workers[0].problems.at(0).find("node 0 (node1) sent unreadable stacks"), std::string::npos);
  EXPECT_NE(workers[3].problems.at(0).find("node 1 (node2) sent no stacks within"), std::string::npos);
  collection.lose(1, "lost contact with the launcher of node2");
  EXPECT_TRUE(collection.complete());
  EXPECT_EQ(collection.workers()[3].problems.at(0), "lost contact with the launcher of node2");
}

}  // namespace
}  // namespace dlaunch::rendezvous
