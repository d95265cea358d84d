// choose_roster(): who trains in a round, with which node rank, and who
// stands by (service/roster.h).
#include "service/roster.h"

#include <gtest/gtest.h>

namespace dlaunch::rendezvous {
namespace {

using Slots = std::vector<int>;

TEST(Roster, RoundZeroTakesTheFirstToJoinInSlotOrderWithNodeZeroFirst) {
  Roster roster = choose_roster({3, 0, 1}, {}, {}, 0, 2);
  EXPECT_EQ(roster.node_slots, (Slots{0, 1}));
  EXPECT_EQ(roster.spare_slots, (Slots{3}));
  roster = choose_roster({2, 3, 0}, {}, {}, 0, 3);
  EXPECT_EQ(roster.node_slots, (Slots{0, 2, 3})) << "slot 1 came late: it will stand by";
}

TEST(Roster, ASpareTakesTheLostNodesRankAndNobodyElseMoves) {
  // Round 0 had slots 0,1,2,3 as node ranks 0..3; slot 2 was lost; 4 and 5 are spares.
  Roster roster = choose_roster({0, 1, 3, 4, 5}, {}, {0, 1, 2, 3}, 0, 4);
  EXPECT_EQ(roster.node_slots, (Slots{0, 1, 4, 3}));
  EXPECT_EQ(roster.spare_slots, (Slots{5}));
}

TEST(Roster, ABenchedNodeNeitherTrainsNorStandsBy) {
  Roster roster = choose_roster({0, 1, 2}, {1}, {0, 1}, 0, 2);
  EXPECT_EQ(roster.node_slots, (Slots{0, 2}));
  EXPECT_TRUE(roster.spare_slots.empty());
}

TEST(Roster, WithoutASpareTheJobShrinksAndTheRanksStayContiguous) {
  // Node ranks 0..3 were slots 0..3; slot 1 was lost, no spare: 3 nodes remain.
  Roster roster = choose_roster({0, 2, 3}, {}, {0, 1, 2, 3}, 0, 4);
  EXPECT_EQ(roster.node_slots, (Slots{0, 3, 2})) << "node 2 keeps its rank; node 3 fills rank 1";
  EXPECT_TRUE(roster.spare_slots.empty());
}

TEST(Roster, TheServiceHostHoldsRankZero) {
  // The service moved to slot 2 (node 0 was lost): it becomes node rank 0.
  Roster roster = choose_roster({1, 2, 3}, {}, {0, 1, 2}, 2, 3);
  EXPECT_EQ(roster.node_slots, (Slots{2, 1, 3}));
}

TEST(Roster, RepeatedJoinsAndAnEmptyJobAreHarmless) {
  EXPECT_EQ(choose_roster({1, 1, 0}, {}, {}, 0, 2).node_slots, (Slots{0, 1}));
  Roster none = choose_roster({}, {}, {0, 1}, 0, 2);
  EXPECT_TRUE(none.node_slots.empty());
  EXPECT_TRUE(none.spare_slots.empty());
}

}  // namespace
}  // namespace dlaunch::rendezvous
