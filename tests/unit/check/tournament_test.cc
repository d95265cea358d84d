// The round-robin schedule of the gate's link checks.
#include "check/tournament.h"

#include <gtest/gtest.h>

#include <set>

namespace dlaunch::check {
namespace {

// Every unordered pair exactly once, as (lower, higher); no rank twice in a round.
void expect_round_robin(int n) {
  auto rounds = tournament_rounds(n);
  ASSERT_EQ(static_cast<int>(rounds.size()), tournament_round_count(n)) << "n=" << n;
  std::set<std::pair<int, int>> seen;
  for (std::size_t round = 0; round < rounds.size(); ++round) {
    std::vector<bool> busy(static_cast<std::size_t>(n), false);
    for (auto [a, b] : rounds[round]) {
      ASSERT_GE(a, 0);
      ASSERT_LT(a, b) << "n=" << n << " round " << round;
      ASSERT_LT(b, n);
      ASSERT_FALSE(busy[static_cast<std::size_t>(a)]) << "n=" << n << " rank " << a << " twice in round " << round;
      ASSERT_FALSE(busy[static_cast<std::size_t>(b)]) << "n=" << n << " rank " << b << " twice in round " << round;
      busy[static_cast<std::size_t>(a)] = busy[static_cast<std::size_t>(b)] = true;
      ASSERT_TRUE(seen.insert({a, b}).second) << "n=" << n << " pair " << a << "," << b << " twice";
    }
    // Every round is full: all ranks busy for even N, all but one for odd N.
    EXPECT_EQ(rounds[round].size(), static_cast<std::size_t>(n / 2)) << "n=" << n;
  }
  EXPECT_EQ(seen.size(), static_cast<std::size_t>(n) * static_cast<std::size_t>(n - 1) / 2) << "n=" << n;
}

TEST(Tournament, RoundCounts) {
  EXPECT_EQ(tournament_round_count(1), 0);
  EXPECT_EQ(tournament_round_count(2), 1);
  EXPECT_EQ(tournament_round_count(3), 3);
  EXPECT_EQ(tournament_round_count(4), 3);
  EXPECT_EQ(tournament_round_count(7), 7);
  EXPECT_EQ(tournament_round_count(64), 63);
  EXPECT_EQ(tournament_round_count(1024), 1023);
}

// The gate's cap: the first rounds of the full schedule, so each rank
// meets MOST others (one fewer when it sits one of them out).
TEST(Tournament, TheFirstRoundsGiveEachRankThatManyPartners) {
  for (int n : {2, 3, 8, 9, 64, 1024}) {
    const int most = 8;
    auto capped = tournament_rounds(n, most);
    auto full = tournament_rounds(n);
    ASSERT_EQ(static_cast<int>(capped.size()), std::min(most, tournament_round_count(n))) << "n=" << n;
    std::vector<std::set<int>> partners(static_cast<std::size_t>(n));
    for (std::size_t round = 0; round < capped.size(); ++round) {
      EXPECT_EQ(capped[round], full[round]) << "n=" << n << " round " << round;
      for (auto [a, b] : capped[round]) {
        partners[static_cast<std::size_t>(a)].insert(b);
        partners[static_cast<std::size_t>(b)].insert(a);
      }
    }
    const int rounds = static_cast<int>(capped.size());
    for (int rank = 0; rank < n; ++rank) {
      int met = static_cast<int>(partners[static_cast<std::size_t>(rank)].size());
      EXPECT_GE(met, n % 2 == 0 ? rounds : rounds - 1) << "n=" << n << " rank " << rank;
      EXPECT_LE(met, rounds) << "n=" << n << " rank " << rank;
    }
  }
  EXPECT_TRUE(tournament_rounds(8, 0).empty());
}

TEST(Tournament, NoPairsForOneRankOrNone) {
  EXPECT_TRUE(tournament_rounds(0).empty());
  EXPECT_TRUE(tournament_rounds(1).empty());
}

TEST(Tournament, TwoRanksMeetOnce) {
  auto rounds = tournament_rounds(2);
  ASSERT_EQ(rounds.size(), 1u);
  ASSERT_EQ(rounds[0].size(), 1u);
  EXPECT_EQ(rounds[0][0], std::make_pair(0, 1));
}

TEST(Tournament, EveryPairOnceNoRankTwiceInARound) {
  for (int n : {2, 3, 4, 5, 6, 7, 8, 9, 16, 63, 64, 1024}) expect_round_robin(n);
}

TEST(Tournament, OddRankCountsRestEachRankOnce) {
  const int n = 7;
  std::vector<int> rests(n, 0);
  for (const auto& round : tournament_rounds(n)) {
    std::vector<bool> busy(n, false);
    for (auto [a, b] : round) busy[static_cast<std::size_t>(a)] = busy[static_cast<std::size_t>(b)] = true;
    for (int rank = 0; rank < n; ++rank) rests[static_cast<std::size_t>(rank)] += busy[static_cast<std::size_t>(rank)] ? 0 : 1;
  }
  for (int rank = 0; rank < n; ++rank) EXPECT_EQ(rests[static_cast<std::size_t>(rank)], 1) << "rank " << rank;
}

}  // namespace
}  // namespace dlaunch::check
