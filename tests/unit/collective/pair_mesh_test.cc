// Which pairs a group of chosen pairs connects for gloo's ring all-reduce
// and dissemination barrier.
#include "collective/pair_mesh.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace dlaunch::collective {
namespace {

TEST(PairMesh, CollectivePeersAreTheRingAndThePowersOfTwo) {
  EXPECT_EQ(collective_peers(0, 1), std::vector<int>{});
  EXPECT_EQ(collective_peers(0, 2), std::vector<int>{1});
  EXPECT_EQ(collective_peers(1, 2), std::vector<int>{0});
  EXPECT_EQ(collective_peers(0, 5), (std::vector<int>{1, 2, 3, 4}));
  // 16 ranks: 3 +- 1, 2, 4, 8.
  EXPECT_EQ(collective_peers(3, 16), (std::vector<int>{1, 2, 4, 5, 7, 11, 15}));
  // About 2 log2 N at 1024, never the whole group.
  EXPECT_EQ(collective_peers(0, 1024).size(), 19u);
}

// Every rank must connect a pair its peer connects too, or both would wait.
TEST(PairMesh, CollectivePeersAreSymmetric) {
  for (int size = 1; size <= 40; ++size) {
    for (int rank = 0; rank < size; ++rank) {
      auto peers = collective_peers(rank, size);
      EXPECT_TRUE(std::is_sorted(peers.begin(), peers.end()));
      EXPECT_EQ(std::find(peers.begin(), peers.end(), rank), peers.end()) << size << "/" << rank;
      for (int peer : peers) {
        auto back = collective_peers(peer, size);
        EXPECT_NE(std::find(back.begin(), back.end(), rank), back.end())
            << "size " << size << ": " << rank << " -> " << peer << " but not back";
      }
    }
  }
}

}  // namespace
}  // namespace dlaunch::collective
