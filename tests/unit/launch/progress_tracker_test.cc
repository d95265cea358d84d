#include "launch/progress_tracker.h"

#include <gtest/gtest.h>

namespace dlaunch::launch {
namespace {

using std::chrono::seconds;
const util::Clock::time_point kStart{seconds(1000)};

TEST(ProgressTracker, OutputIsProgressUntilAWorkerUsesSteps) {
  ProgressTracker tracker({0, 1}, kStart);
  EXPECT_EQ(tracker.last_progress(), kStart);
  tracker.on_output(1, kStart + seconds(5));
  EXPECT_EQ(tracker.last_progress(), kStart + seconds(5));
  // Worker 1 reports a step: from now on only its steps count for it.
  tracker.on_progress_bytes(1, "7\n", kStart + seconds(6));
  tracker.on_output(1, kStart + seconds(20));
  EXPECT_EQ(tracker.last_progress(), kStart + seconds(6));
  // Worker 0 never used steps: its output still counts.
  tracker.on_output(0, kStart + seconds(30));
  EXPECT_EQ(tracker.last_progress(), kStart + seconds(30));
}

TEST(ProgressTracker, OnlyANewStepIsProgress) {
  ProgressTracker tracker({4}, kStart);
  tracker.on_progress_bytes(0, "1\n", kStart + seconds(1));
  tracker.on_progress_bytes(0, "1\n1\n", kStart + seconds(9));  // the same step again
  EXPECT_EQ(tracker.last_progress(), kStart + seconds(1));
  tracker.on_progress_bytes(0, "2\n", kStart + seconds(10));
  EXPECT_EQ(tracker.last_progress(), kStart + seconds(10));
  EXPECT_EQ(tracker.steps(), (std::vector<rendezvous::RankStep>{{4, 2}}));
}

TEST(ProgressTracker, JoinsLinesSplitAcrossReadsAndIgnoresGarbage) {
  ProgressTracker tracker({0}, kStart);
  tracker.on_progress_bytes(0, "12", kStart + seconds(1));
  EXPECT_TRUE(tracker.steps().empty());
  tracker.on_progress_bytes(0, "3\r\nstep 9\n\n-4x\n", kStart + seconds(2));
  ASSERT_EQ(tracker.steps().size(), 1u);
  EXPECT_EQ(tracker.steps()[0].step, 123);
  // A line longer than the bound is dropped to its end, whatever it holds.
  tracker.on_progress_bytes(0, std::string(ProgressTracker::kLongestLine + 1, '7'), kStart + seconds(3));
  tracker.on_progress_bytes(0, "8\n", kStart + seconds(4));
  EXPECT_EQ(tracker.steps()[0].step, 123);
  tracker.on_progress_bytes(0, " 124 \n", kStart + seconds(5));
  EXPECT_EQ(tracker.steps()[0].step, 124);
  EXPECT_EQ(tracker.last_progress(), kStart + seconds(5));
}

// A step outside 0..a trillion (a negative one, 9e18, INT64_MIN) is no
// step: it neither moves the worker nor reaches node 0's median.
TEST(ProgressTracker, StepsOutOfBoundsAreNoSteps) {
  ProgressTracker tracker({0}, kStart);
  tracker.on_progress_bytes(0, "5\n", kStart + seconds(1));
  tracker.on_progress_bytes(0, "9000000000000000000\n-9223372036854775808\n-1\n1000000000001\n",
                            kStart + seconds(2));
  EXPECT_EQ(tracker.steps(), (std::vector<rendezvous::RankStep>{{0, 5}}));
  EXPECT_EQ(tracker.last_progress(), kStart + seconds(1));
  tracker.on_progress_bytes(0, "1000000000000\n", kStart + seconds(3));
  EXPECT_EQ(tracker.steps()[0].step, rendezvous::kMostSteps);
}

TEST(ProgressTracker, IgnoresWorkersItDoesNotKnow) {
  ProgressTracker tracker({0}, kStart);
  tracker.on_output(5, kStart + seconds(9));
  tracker.on_progress_bytes(5, "1\n", kStart + seconds(9));
  EXPECT_EQ(tracker.last_progress(), kStart);
}

}  // namespace
}  // namespace dlaunch::launch
