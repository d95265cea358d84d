// Which host every rank of the check's group runs on, learnt through the
// group itself (one all-reduce of every rank's name in its own slot).
#include "check/group_layout.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fake_communicator.h"

namespace dlaunch::check {
namespace {

using test_support::FakeCommunicator;

constexpr std::size_t kSlot = 64;  // the bytes each rank's name gets

// The all-reduce contribution of the other ranks: each name in its rank's slot.
std::vector<std::int64_t> names_of_others(const std::vector<std::string>& host_of_rank, int self) {
  std::vector<std::int64_t> names(host_of_rank.size() * kSlot, 0);
  for (std::size_t rank = 0; rank < host_of_rank.size(); ++rank) {
    if (static_cast<int>(rank) == self) continue;
    for (std::size_t i = 0; i < host_of_rank[rank].size(); ++i)
      names[rank * kSlot + i] = static_cast<unsigned char>(host_of_rank[rank][i]);
  }
  return names;
}

TEST(GroupLayout, EveryRanksHostInRankOrder) {
  std::vector<std::string> hosts{"node1", "node1", "node2", "node1"};
  FakeCommunicator communicator(2, 4);
  communicator.others_add.push_back(names_of_others(hosts, 2));
  GroupLayout layout = gather_layout(communicator, "node2");
  EXPECT_EQ(communicator.allreduces, 1);
  EXPECT_EQ(layout.host_of_rank, hosts);
  EXPECT_EQ(layout.hosts, (std::vector<std::string>{"node1", "node2"}));
  EXPECT_EQ(layout.ranks_per_host.at("node1"), 3);
  EXPECT_EQ(layout.ranks_per_host.at("node2"), 1);
  EXPECT_EQ(layout.first_rank_of_host.at("node1"), 0);
  EXPECT_EQ(layout.first_rank_of_host.at("node2"), 2);
  EXPECT_EQ(describe_ranks_per_host(layout), "node1=3, node2=1");
}

TEST(GroupLayout, LongHostNamesAreCutToTheirSlot) {
  std::string long_name(100, 'h');
  FakeCommunicator communicator(0, 1);
  GroupLayout layout = gather_layout(communicator, long_name);
  EXPECT_EQ(layout.host_of_rank, (std::vector<std::string>{std::string(63, 'h')}));
  EXPECT_EQ(describe_ranks_per_host(layout), std::string(63, 'h') + "=1");
}

TEST(GroupLayout, HostsAreDescribedInTheOrderOfTheirFirstRank) {
  GroupLayout layout;
  layout.hosts = {"zeta", "alpha"};
  layout.ranks_per_host = {{"zeta", 2}, {"alpha", 1}};
  EXPECT_EQ(describe_ranks_per_host(layout), "zeta=2, alpha=1");
  EXPECT_EQ(describe_ranks_per_host(GroupLayout{}), "");
}

}  // namespace
}  // namespace dlaunch::check
