// A loop's own stall (SIGSTOP, a hung host), told from the gaps between its
// wakes. Pure: every time point is given.
#include "process/stall_watch.h"

#include <gtest/gtest.h>

#include <chrono>

namespace dlaunch::process {
namespace {

using namespace std::chrono_literals;
using Clock = StallWatch::Clock;

const Clock::time_point kStart{100s};  // any fixed point on the monotonic clock

TEST(StallWatch, GapsUnderTheThresholdAreNoStallHoweverManyThereAre) {
  StallWatch watch(1000ms, kStart);
  // Over 2 s in all, but never 1 s between two looks: a loop that ran.
  EXPECT_EQ(watch.look(kStart + 999ms), std::nullopt);
  EXPECT_EQ(watch.look(kStart + 1998ms), std::nullopt);
  EXPECT_EQ(watch.look(kStart + 2500ms), std::nullopt);
  EXPECT_EQ(watch.recent(kStart + 2500ms, 1h), std::nullopt);
  EXPECT_EQ(watch.resumed(), kStart) << "never stalled: silence counts from the start";
}

TEST(StallWatch, AGapOfTheThresholdOrMoreIsAStallReturnedAndRemembered) {
  StallWatch watch(1000ms, kStart);
  EXPECT_EQ(watch.look(kStart + 1000ms), 1000ms);  // at the threshold exactly
  auto stall = watch.recent(kStart + 1000ms, 0ms);
  ASSERT_TRUE(stall);
  EXPECT_EQ(stall->ended, kStart + 1000ms);
  EXPECT_EQ(stall->length, 1000ms);

  EXPECT_EQ(watch.look(kStart + 1500ms), std::nullopt);
  EXPECT_EQ(watch.look(kStart + 31500ms), 30000ms);  // kill -STOP for 30 s
  stall = watch.recent(kStart + 31500ms, 0ms);
  ASSERT_TRUE(stall);
  EXPECT_EQ(stall->length, 30000ms) << "the last stall, not the first";
}

TEST(StallWatch, AStallIsRecentOnlyWithinTheWindowAfterItEnded) {
  StallWatch watch(1000ms, kStart);
  ASSERT_TRUE(watch.look(kStart + 5s));
  EXPECT_TRUE(watch.recent(kStart + 5s, 2s));
  EXPECT_TRUE(watch.recent(kStart + 7s, 2s)) << "at the window's edge";
  EXPECT_EQ(watch.recent(kStart + 7001ms, 2s), std::nullopt);
  // Looks that find no stall do not forget the last one.
  EXPECT_EQ(watch.look(kStart + 5500ms), std::nullopt);
  EXPECT_TRUE(watch.recent(kStart + 6s, 2s));
}

// Silence is counted from the end of the last stall at the earliest: every
// peer went quiet for this process at once while it was stopped.
TEST(StallWatch, ResumedMovesToTheEndOfTheLastStall) {
  StallWatch watch(1000ms, kStart);
  EXPECT_EQ(watch.resumed(), kStart);
  ASSERT_TRUE(watch.look(kStart + 3s));
  EXPECT_EQ(watch.resumed(), kStart + 3s);
  EXPECT_EQ(watch.look(kStart + 3500ms), std::nullopt);
  EXPECT_EQ(watch.resumed(), kStart + 3s) << "a look without a stall moves nothing";
  ASSERT_TRUE(watch.look(kStart + 10s));
  EXPECT_EQ(watch.resumed(), kStart + 10s);
}

// The loop may look more often than it wakes, from a time point taken a
// little earlier: an older point never moves the last look back, so it
// cannot make the next gap look longer than it was.
TEST(StallWatch, ALookFromAnEarlierPointNeitherStallsNorMovesTheLastLookBack) {
  StallWatch watch(1000ms, kStart);
  EXPECT_EQ(watch.look(kStart + 900ms), std::nullopt);
  EXPECT_EQ(watch.look(kStart + 100ms), std::nullopt);
  EXPECT_EQ(watch.look(kStart + 1800ms), std::nullopt) << "900 ms since the last look, not 1700";
}

// The heartbeat timeout comes with node 0's World, after the watch began.
TEST(StallWatch, TheThresholdCanBeChangedWhileItRuns) {
  StallWatch watch(1000ms, kStart);
  EXPECT_EQ(watch.threshold(), 1000ms);
  watch.set_threshold(5000ms);
  EXPECT_EQ(watch.threshold(), 5000ms);
  EXPECT_EQ(watch.look(kStart + 4999ms), std::nullopt);
  watch.set_threshold(2000ms);
  EXPECT_EQ(watch.look(kStart + 7000ms), 2001ms);
}

TEST(StallThreshold, HalfTheHeartbeatTimeoutButNeverUnderASecond) {
  EXPECT_EQ(stall_threshold(0ms), 1000ms);
  EXPECT_EQ(stall_threshold(500ms), 1000ms);
  EXPECT_EQ(stall_threshold(2000ms), 1000ms);
  EXPECT_EQ(stall_threshold(3000ms), 1500ms);
  EXPECT_EQ(stall_threshold(30000ms), 15000ms);
}

}  // namespace
}  // namespace dlaunch::process
