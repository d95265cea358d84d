// RecoveryLog and roster_changes (service/recovery_log.h): who took whose
// place, the down time from the first sign of the fault, and the bounded
// timeline every Verdict carries.
#include "service/recovery_log.h"

#include <gtest/gtest.h>

namespace dlaunch::rendezvous {
namespace {

using namespace std::chrono_literals;
using Lines = std::vector<std::string>;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(RosterChanges, ASpareTakingALostNodesRankIsTheOnlyChange) {
  Roster roster{{0, 1, 4, 3}, {5}};
  Lines hosts{"h0", "h1", "h2", "h3", "h4", "h5"};
  EXPECT_EQ(roster_changes(roster, {0, 1, 2, 3}, hosts, 4, 4), Lines{"h4 (spare) takes node rank 2"});
}

TEST(RosterChanges, AMoveAndAShrinkAreBothSaid) {
  Roster roster{{1, 3}, {}};
  Lines changes = roster_changes(roster, {0, 1, 3}, {"h0", "h1", "h2", "h3"}, 3, 2);
  EXPECT_EQ(changes, (Lines{"h1 moves from node rank 1 to 0", "h3 moves from node rank 2 to 1",
                            "the job goes on with 2 of 3 nodes (--min-nodes 2)"}));
}

TEST(RosterChanges, AnUnknownHostIsNamedByItsSlot) {
  Roster roster{{0, 7}, {}};
  EXPECT_EQ(roster_changes(roster, {0, 1}, {"h0"}, 2, 2), Lines{"slot 7 (spare) takes node rank 1"});
}

TEST(RecoveryLog, TheDownTimeRunsFromTheEarliestSignOfTheFaultToEveryWorkerRunning) {
  RecoveryLog log;
  auto start = util::Clock::now();
  log.failure_noticed(start + 3s);
  log.fault(start);       // the lost node's last frame, 3 s before its loss was noticed
  log.fault(start + 1s);  // a later sign counts for nothing
  log.replaced(1, 2, {"h4 (spare) takes node rank 2"});
  auto line = log.round_running(start + 5s);
  ASSERT_TRUE(line);
  EXPECT_TRUE(contains(*line, "round 1: h4 (spare) takes node rank 2; restart 1/2")) << *line;
  EXPECT_TRUE(contains(*line, "the job was down 5.00 s")) << *line;
  EXPECT_TRUE(contains(*line, "(3.00 s of it before the loss was noticed)")) << *line;
  ASSERT_EQ(log.timeline().size(), 1u);
  EXPECT_TRUE(contains(log.timeline()[0], *line));
  EXPECT_FALSE(log.round_running(start + 6s)) << "the line is said once";
}

TEST(RecoveryLog, ARoundThatEndsBeforeItsWorkersAllRanSaysNoDownTimeIsKnown) {
  RecoveryLog log;
  log.failure_noticed(util::Clock::now());
  log.replaced(2, 3, {"h1 moves from node rank 1 to 0"});
  auto line = log.round_running(std::nullopt);
  ASSERT_TRUE(line);
  EXPECT_TRUE(contains(*line, "no down time is known")) << *line;
}

TEST(RecoveryLog, ARoundThatReplacedNobodySaysNothing) {
  RecoveryLog log;
  log.replaced(1, 1, {});
  EXPECT_FALSE(log.round_running(util::Clock::now()));
  EXPECT_TRUE(log.timeline().empty());
}

TEST(RecoveryLog, TheTimelineKeepsItsFirstEventAndTheLatest) {
  RecoveryLog log({"12:00:00 node 0 was lost"});
  for (int i = 0; i < 200; ++i) log.add("event " + std::to_string(i));
  ASSERT_EQ(log.timeline().size(), 64u);
  EXPECT_EQ(log.timeline().front(), "12:00:00 node 0 was lost") << "a take-over's first event stays";
  EXPECT_TRUE(contains(log.timeline().back(), "event 199"));
  EXPECT_TRUE(contains(log.timeline()[1], "event 137"));
}

}  // namespace
}  // namespace dlaunch::rendezvous
