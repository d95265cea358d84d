// RepeatGuard: the same failure twice in a row with no progress stops the
// job; a different one, progress, or a transient kind does not.
#include "doctor/repeat_guard.h"

#include <gtest/gtest.h>

namespace dlaunch::doctor {
namespace {

rendezvous::Failure value_error(int rank, int line) {
  rendezvous::Failure failure;
  failure.global_rank = rank;
  failure.exit_code = 1;
  failure.last_lines = {"Traceback (most recent call last):",
                        "  File \"train.py\", line " + std::to_string(line) + ", in load_config",
                        "ValueError: bad config"};
  return failure;
}

TEST(RepeatGuard, StopsTheSecondTimeWithoutProgress) {
  RepeatGuard guard;
  EXPECT_FALSE(guard.judge(value_error(2, 12), 0, 2.0));
  auto why = guard.judge(value_error(2, 12), 1, 2.1);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("not retrying: the same ValueError at train.py:12 in attempts 0 and 1"), std::string::npos)
      << *why;
}

TEST(RepeatGuard, AnyRankCounts) {
  RepeatGuard guard;
  EXPECT_FALSE(guard.judge(value_error(2, 12), 0, 2.0));
  EXPECT_TRUE(guard.judge(value_error(3, 12), 1, 2.0));
}

TEST(RepeatGuard, RestartsWhatDiffersOrProgressed) {
  RepeatGuard guard;
  EXPECT_FALSE(guard.judge(value_error(2, 12), 0, 2.0));
  EXPECT_FALSE(guard.judge(value_error(2, 13), 1, 2.0));     // another line
  EXPECT_FALSE(guard.judge(value_error(2, 13), 2, 600.0));   // went much further
  EXPECT_FALSE(guard.judge(std::nullopt, 3, 1.0));           // no failure of its own
  EXPECT_FALSE(guard.judge(value_error(2, 13), 4, 1.0));
}

TEST(RepeatGuard, StepsWeighProgressWhereBothAttemptsReportedThem) {
  RepeatGuard guard;
  EXPECT_FALSE(guard.judge(value_error(2, 12), 0, 100.0, 1200));
  EXPECT_FALSE(guard.judge(value_error(2, 12), 1, 100.0, 1500)) << "further along, in the same time";
  auto why = guard.judge(value_error(2, 12), 2, 300.0, 1500);
  ASSERT_TRUE(why) << "no step further, however long it took";
  EXPECT_NE(why->find("(step 1500, then step 1500)"), std::string::npos) << *why;
  RepeatGuard fresh;
  EXPECT_FALSE(fresh.judge(value_error(2, 12), 0, 1.0));
  why = fresh.judge(value_error(2, 12), 1, 1.0);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("before any step"), std::string::npos) << *why;
}

TEST(RepeatGuard, TransientKindsAreAlwaysRestarted) {
  RepeatGuard guard;
  rendezvous::Failure lost;
  lost.node_rank = 1;
  lost.description = "lost contact with the launcher of node 1";
  EXPECT_FALSE(guard.judge(lost, 0, 5.0));
  EXPECT_FALSE(guard.judge(lost, 1, 5.0));
}

}  // namespace
}  // namespace dlaunch::doctor
