// Node 0's survey: who probes whom, and each host's interface from the reports.
#include "survey/network_survey.h"

#include <gtest/gtest.h>

namespace dlaunch::rendezvous {
namespace {

net::Interface candidate(const std::string& name, const std::string& address, int index, int speed = 10000) {
  net::Interface result;
  result.name = name;
  result.index = index;
  result.addresses = {address};
  result.up = true;
  result.speed_mbps = speed;
  return result;
}

// Three hosts, each with a decoy that comes first (and is faster) and eth0.
NetworkSurvey three_hosts() {
  NetworkSurvey survey;
  for (int slot = 0; slot < 3; ++slot)
    survey.add_host(slot, "node" + std::to_string(slot + 1),
                    {candidate("decoy0", "10.254." + std::to_string(slot) + ".1", 2, 100000),
                     candidate("eth0", "10.0.0." + std::to_string(slot + 11), 3)},
                    40000 + static_cast<std::uint32_t>(slot));
  return survey;
}

// What each prober finds: eth0 answers, the decoys do not.
ProbeReportMessage report_for(const ProbeMessage& request) {
  ProbeReportMessage report{request.round, {}};
  for (const auto& target : request.targets)
    report.outcomes.push_back({target.slot, target.address, target.address.rfind("10.0.0.", 0) == 0});
  return report;
}

TEST(NetworkSurvey, EveryHostIsProbedByTheOthersAtEveryCandidateAddress) {
  NetworkSurvey survey = three_hosts();
  auto requests = survey.ask({0, 1, 2}, {0, 1, 2}, 0);
  ASSERT_EQ(requests.size(), 3u);
  // Slot 0 probes both addresses of slots 1 and 2, never its own.
  ASSERT_EQ(requests[0].targets.size(), 4u);
  for (const auto& target : requests[0].targets) EXPECT_NE(target.slot, 0u);
  EXPECT_EQ(requests[0].targets[0].port, 40001u);
  EXPECT_FALSE(survey.complete());
}

TEST(NetworkSurvey, TheReachableInterfaceWinsOverAFasterDecoy) {
  NetworkSurvey survey = three_hosts();
  auto requests = survey.ask({0, 1, 2}, {0, 1, 2}, 0);
  for (const auto& [slot, request] : requests) survey.take_report(slot, report_for(request));
  EXPECT_TRUE(survey.complete());
  auto lines = survey.settle({0, 1, 2});
  ASSERT_EQ(lines.size(), 3u);
  for (int slot = 0; slot < 3; ++slot) {
    const auto* choice = survey.choice(slot);
    ASSERT_NE(choice, nullptr);
    EXPECT_EQ(choice->ifname, "eth0");
    EXPECT_EQ(choice->address, "10.0.0." + std::to_string(slot + 11));
  }
  EXPECT_NE(lines[1].find("node2"), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find("decoy0 skipped"), std::string::npos) << lines[1];
  EXPECT_TRUE(survey.unsurveyed({0, 1, 2}).empty());
}

TEST(NetworkSurvey, ALostProberIsForgottenAndALateHostIsSurveyedAlone) {
  NetworkSurvey survey = three_hosts();
  auto requests = survey.ask({0, 1}, {0, 1}, 0);
  survey.take_report(0, report_for(requests[0]));
  survey.forget(1);
  EXPECT_TRUE(survey.complete());
  survey.settle({0, 1});
  EXPECT_EQ(survey.unsurveyed({0, 1, 2}), std::vector<int>{2});
  // Slot 2 arrives later: only its probers are asked, only about it.
  auto late = survey.ask({0, 1, 2}, {2}, 1);
  ASSERT_EQ(late.count(2), 0u);
  for (const auto& [slot, request] : late)
    for (const auto& target : request.targets) EXPECT_EQ(target.slot, 2u);
}

TEST(NetworkSurvey, AReportFromASlotNotAskedIsIgnored) {
  NetworkSurvey survey = three_hosts();
  auto requests = survey.ask({0, 1, 2}, {1}, 0);  // only about slot 1: 0 and 2 probe
  ASSERT_EQ(requests.count(1), 0u);
  survey.take_report(1, ProbeReportMessage{0, {{1, "10.0.0.12", true}}});  // a host vouching for itself
  EXPECT_FALSE(survey.complete());
}

// Launchers that report the same host and interfaces are one machine: it
// is probed once, from another machine, and every launcher on it gets its
// choice; the line says how many launchers it speaks for.
TEST(NetworkSurvey, LaunchersOnOneMachineAreSurveyedOnce) {
  NetworkSurvey survey;
  auto machine_a = [&](int slot) {
    survey.add_host(slot, "nodeA", {candidate("eth0", "10.0.0.11", 2)}, 41000 + static_cast<std::uint32_t>(slot));
  };
  for (int slot : {0, 1, 2}) machine_a(slot);
  survey.add_host(3, "nodeB", {candidate("eth0", "10.0.0.12", 2)}, 41003);
  auto requests = survey.ask({0, 1, 2, 3}, {0, 1, 2, 3}, 0);
  // nodeA (slot 0) is probed by nodeB's launcher, nodeB by slot 0 only.
  ASSERT_EQ(requests.size(), 2u);
  ASSERT_EQ(requests.count(3), 1u);
  ASSERT_EQ(requests[3].targets.size(), 1u);
  EXPECT_EQ(requests[3].targets[0].slot, 0u);
  ASSERT_EQ(requests.count(0), 1u);
  ASSERT_EQ(requests[0].targets.size(), 1u);
  EXPECT_EQ(requests[0].targets[0].slot, 3u);
  for (const auto& [slot, request] : requests) survey.take_report(slot, report_for(request));
  EXPECT_TRUE(survey.complete());
  auto lines = survey.settle({0, 1, 2, 3});
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[0].find("for its 3 launchers"), std::string::npos) << lines[0];
  for (int slot : {0, 1, 2}) {
    const auto* choice = survey.choice(slot);
    ASSERT_NE(choice, nullptr) << slot;
    EXPECT_EQ(choice->ifname, "eth0");
    EXPECT_EQ(choice->address, "10.0.0.11");
  }
  ASSERT_NE(survey.choice(3), nullptr);
  EXPECT_EQ(survey.choice(3)->address, "10.0.0.12");
}

// A whole job on one machine: one probe, from another launcher of it.
TEST(NetworkSurvey, AJobOnOneMachineMakesOneProbe) {
  NetworkSurvey survey;
  for (int slot = 0; slot < 64; ++slot)
    survey.add_host(slot, "vm", {candidate("eth0", "10.0.0.11", 2)}, 42000 + static_cast<std::uint32_t>(slot));
  std::vector<int> all;
  for (int slot = 0; slot < 64; ++slot) all.push_back(slot);
  auto requests = survey.ask(all, all, 0);
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests.begin()->first, 1);
  ASSERT_EQ(requests.begin()->second.targets.size(), 1u);
  EXPECT_EQ(requests.begin()->second.targets[0].slot, 0u);
  for (const auto& [slot, request] : requests) survey.take_report(slot, report_for(request));
  auto lines = survey.settle(all);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("for its 64 launchers"), std::string::npos) << lines[0];
  for (int slot : all) ASSERT_NE(survey.choice(slot), nullptr) << slot;
}

// The same host name with other addresses is another machine (a name given
// twice by mistake), surveyed on its own.
TEST(NetworkSurvey, TheSameNameWithOtherAddressesIsAnotherMachine) {
  NetworkSurvey survey;
  survey.add_host(0, "node", {candidate("eth0", "10.0.0.11", 2)}, 43000);
  survey.add_host(1, "node", {candidate("eth0", "10.0.0.12", 2)}, 43001);
  auto requests = survey.ask({0, 1}, {0, 1}, 0);
  EXPECT_EQ(requests.size(), 2u);
  for (const auto& [slot, request] : requests) survey.take_report(slot, report_for(request));
  EXPECT_EQ(survey.settle({0, 1}).size(), 2u);
  EXPECT_EQ(survey.choice(1)->address, "10.0.0.12");
}

}  // namespace
}  // namespace dlaunch::rendezvous
