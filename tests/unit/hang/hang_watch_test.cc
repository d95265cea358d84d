#include "hang/hang_watch.h"

#include "rendezvous/coordinator.h"
#include "util/exit_codes.h"

#include <gtest/gtest.h>

namespace dlaunch::rendezvous {
namespace {

using std::chrono::seconds;
const util::Clock::time_point kStart{seconds(1000)};

HangSettings hang_after(int timeout_s, std::int64_t lag = 0) {
  HangSettings settings;
  settings.hang_timeout = seconds(timeout_s);
  settings.straggler_lag = lag;
  return settings;
}

// --hang-timeout TIMEOUT_S with --startup-timeout STARTUP_S.
HangSettings hang_after(int timeout_s, seconds startup) {
  HangSettings settings = hang_after(timeout_s);
  settings.startup_timeout = startup;
  return settings;
}

TEST(HangWatch, TheJobIsHungOnlyWhenEveryNodeIsIdle) {
  HangWatch watch(hang_after(10), 2, kStart);
  EXPECT_EQ(watch.due(), kStart + seconds(10));
  watch.update(1, "node2", kStart + seconds(8), {});
  EXPECT_FALSE(watch.hung(kStart + seconds(12)));  // node 2 moved at 8 s
  EXPECT_TRUE(watch.hung(kStart + seconds(18)));
  EXPECT_EQ(watch.declare(kStart + seconds(18)), "no progress for 10 s on any rank (--hang-timeout 10)");
  EXPECT_FALSE(watch.due());  // declared once
  EXPECT_FALSE(watch.hung(kStart + seconds(100)));
}

TEST(HangWatch, ASlowStartIsNotAHangUntilTheStartupTimeout) {
  HangWatch watch(hang_after(10, seconds(120)), 2, kStart);
  EXPECT_EQ(watch.due(), kStart + seconds(120)) << "no step yet: the start-up timeout holds";
  EXPECT_FALSE(watch.hung(kStart + seconds(60)));
  EXPECT_TRUE(watch.hung(kStart + seconds(120)));
  EXPECT_EQ(watch.declare(kStart + seconds(120)),
            "no rank reported a first step within 120 s of the start (--startup-timeout 120), and none made "
            "progress for 120 s (--hang-timeout 10)");
}

TEST(HangWatch, TheFirstStepEndsTheStartupPhase) {
  HangWatch watch(hang_after(10, seconds(120)), 2, kStart);
  watch.update(0, "a", kStart + seconds(30), {});
  EXPECT_EQ(watch.due(), kStart + seconds(120)) << "output is progress, but not a step";
  watch.update(1, "b", kStart + seconds(40), {{2, 1}});
  EXPECT_EQ(watch.due(), kStart + seconds(50)) << "a step: the steady-state hang timeout from now on";
  EXPECT_TRUE(watch.hung(kStart + seconds(50)));
  EXPECT_EQ(watch.declare(kStart + seconds(50)), "no progress for 10 s on any rank (--hang-timeout 10)");
}

TEST(HangWatch, ProgressPastTheStartupTimeoutStillCounts) {
  HangWatch watch(hang_after(10, seconds(20)), 1, kStart);
  watch.update(0, "a", kStart + seconds(18), {});
  EXPECT_EQ(watch.due(), kStart + seconds(28)) << "the later of the two ends";
}

TEST(HangWatch, ALateReportNeverMovesANodeBack) {
  HangWatch watch(hang_after(10), 1, kStart);
  watch.update(0, "a", kStart + seconds(9), {});
  watch.update(0, "a", kStart + seconds(3), {});
  EXPECT_EQ(watch.due(), kStart + seconds(19));
}

TEST(HangWatch, NeverHungWithoutATimeoutAndIgnoresUnknownNodes) {
  HangWatch watch(hang_after(0), 2, kStart);
  EXPECT_FALSE(watch.due());
  EXPECT_FALSE(watch.hung(kStart + seconds(1'000'000)));
  HangWatch two(hang_after(10), 2, kStart);
  two.update(7, "stranger", kStart + seconds(50), {});
  EXPECT_TRUE(two.hung(kStart + seconds(11)));
}

TEST(HangWatch, NamesStragglersBehindTheMedianOnceAndWhenTheyCatchUp) {
  HangWatch watch(hang_after(0, 5), 2, kStart);
  EXPECT_FALSE(watch.straggler_news());  // no steps yet
  watch.update(0, "node1", kStart, {{0, 100}, {1, 100}});
  watch.update(1, "node2", kStart, {{2, 100}, {3, 90}});
  EXPECT_EQ(watch.straggler_news(),
            "straggler (more than 5 steps behind the median step 100): rank 3 on node2 at step 90, 10 behind");
  EXPECT_FALSE(watch.straggler_news());  // unchanged: said once
  watch.update(1, "node2", kStart, {{2, 101}, {3, 98}});
  EXPECT_EQ(watch.straggler_news(), "no stragglers now (median step 100)");
}

TEST(HangWatch, AHangsFailureCarriesItsExitCodeAndWhere) {
  Failure failure = hang_failure("no progress for 10 s on any rank", "rank 2 on node1 differs", "/logs/stacks/x.txt");
  EXPECT_EQ(failure.exit_code, util::kExitHang);
  EXPECT_EQ(failure.global_rank, -1);
  EXPECT_EQ(failure.description,
            "hang: no progress for 10 s on any rank; rank 2 on node1 differs (stacks in /logs/stacks/x.txt)");
}

}  // namespace
}  // namespace dlaunch::rendezvous
