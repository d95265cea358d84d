// The lines said while the rendezvous waits, and when they are due.
#include "service/waiting_status.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace dlaunch::rendezvous {
namespace {

using namespace std::chrono_literals;

GatheringNodes two_of_four() {
  GatheringNodes gathering;
  gathering.missing = {1, 3};
  gathering.joined = 2;
  gathering.needed = 4;
  gathering.waited = 12'400ms;
  gathering.timeout = 300s;
  return gathering;
}

TEST(WaitingSchedule, LinesComeEveryFiveSecondsThenTenThenThirty) {
  WaitingSchedule schedule;
  std::vector<long long> marks;
  std::chrono::milliseconds at(0);
  while (at < 300s) {
    at += schedule.interval_after(at);
    marks.push_back(std::chrono::duration_cast<std::chrono::seconds>(at).count());
  }
  EXPECT_EQ(marks, (std::vector<long long>{5, 10, 15, 20, 25, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120,
                                           150, 180, 210, 240, 270, 300}));
}

TEST(WaitingSchedule, ItsStepsArePlainFields) {
  WaitingSchedule schedule{100ms, 300ms, 200ms, 1s, 500ms};
  EXPECT_EQ(schedule.interval_after(0ms), 100ms);
  EXPECT_EQ(schedule.interval_after(300ms), 200ms);
  EXPECT_EQ(schedule.interval_after(1s), 500ms);
}

TEST(GatheringLine, NamesTheMissingNodeRanksAndHowFarTheWaitIs) {
  EXPECT_EQ(gathering_line(two_of_four()), "waiting for node rank(s) 1, 3 (2/4 joined, 12 s of 300 s)");
}

TEST(GatheringLine, NamesTheirHostsWhenSlurmsNodeListGivesThem) {
  GatheringNodes gathering = two_of_four();
  gathering.expected_hosts = {"n0", "n1", "", "n3"};
  EXPECT_EQ(gathering_line(gathering), "waiting for node rank(s) 1 at n1, 3 at n3 (2/4 joined, 12 s of 300 s)");
  gathering.expected_hosts = {"n0", ""};  // rank 1 unknown, rank 3 beyond the list
  EXPECT_EQ(gathering_line(gathering), "waiting for node rank(s) 1, 3 (2/4 joined, 12 s of 300 s)");
}

TEST(GatheringLine, AThousandMissingNodesStillMakeOneShortLine) {
  GatheringNodes gathering = two_of_four();
  gathering.missing.clear();
  for (int slot = 1; slot < 1000; ++slot) gathering.missing.push_back(slot);
  gathering.joined = 1;
  gathering.needed = 1000;
  EXPECT_EQ(gathering_line(gathering),
            "waiting for node rank(s) 1, 2, 3, 4, 5, 6, 7, 8 and 991 more (1/1000 joined, 12 s of 300 s)");
}

TEST(GatheringLine, WithSparesItSaysHowManyMoreAndWhichSlotsAreAbsent) {
  GatheringNodes gathering = two_of_four();
  gathering.spares = true;
  gathering.needed = 3;
  EXPECT_EQ(gathering_line(gathering),
            "waiting for 1 more launcher(s); not joined: slot(s) 1, 3 (2/3 joined, 12 s of 300 s)");
}

TEST(ReachingLine, NamesTheServiceItsAddressAndWhatWasMetLast) {
  ReachingService reaching;
  reaching.address = "node1:29500";
  reaching.last_seen = "connection refused";
  reaching.waited = 12'900ms;
  reaching.timeout = 300s;
  EXPECT_EQ(reaching_line(reaching), "waiting for node 0 at node1:29500 (12 s of 300 s): connection refused");
  reaching.last_seen.clear();
  reaching.service = "the launcher that took over the rendezvous";
  EXPECT_EQ(reaching_line(reaching),
            "waiting for the launcher that took over the rendezvous at node1:29500 (12 s of 300 s): no answer yet");
}

}  // namespace
}  // namespace dlaunch::rendezvous
