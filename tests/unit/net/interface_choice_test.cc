// Each host's interface chosen from the peers' probes, and who probes whom.
#include "net/interface_choice.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "../test_support/text.h"

namespace dlaunch::net {
namespace {

using test_support::contains;

Interface make(std::string name, int index, std::string address, int speed_mbps) {
  Interface interface;
  interface.name = std::move(name);
  interface.index = index;
  if (!address.empty()) interface.addresses.push_back(std::move(address));
  interface.up = true;
  interface.speed_mbps = speed_mbps;
  interface.loopback = interface.name == "lo";
  interface.excluded = exclusion_reason(interface);
  return interface;
}

// Every slot in FROM probes every ADDRESS of slot TO; REACHED says which succeed.
void probe(std::vector<ProbeResult>& probes, const std::vector<int>& from, int to, const std::string& address,
           bool reached) {
  for (int slot : from) probes.push_back({slot, to, address, reached});
}

TEST(NetInterfaceChoice, ADecoyThatReachesNobodyLosesEvenIfFasterAndFirst) {
  HostInterfaces host{1, "node1",
                      {make("lo", 1, "127.0.0.1", 0), make("decoy0", 2, "192.168.99.1", 100000),
                       make("eth0", 3, "10.0.0.2", 10000)}};
  std::vector<ProbeResult> probes;
  probe(probes, {0, 2}, 1, "192.168.99.1", false);
  probe(probes, {0, 2}, 1, "10.0.0.2", true);
  auto choices = choose_interfaces({host}, probes);
  ASSERT_EQ(choices.size(), 1u);
  EXPECT_EQ(choices[0].slot, 1);
  EXPECT_EQ(choices[0].host, "node1");
  EXPECT_EQ(choices[0].ifname, "eth0");
  EXPECT_EQ(choices[0].address, "10.0.0.2");
  EXPECT_EQ(choices[0].reached_by, 2);
  EXPECT_EQ(choices[0].probed_by, 2);
  EXPECT_EQ(choices[0].why,
            "node1: eth0 (10 Gb/s, reaches 2/2 peers); decoy0 skipped: reaches 0/2; lo skipped: loopback");
}

TEST(NetInterfaceChoice, TheFastestOfTwoThatReachEveryoneWins) {
  HostInterfaces host{2, "node2",
                      {make("lo", 1, "127.0.0.1", 0), make("eth0", 2, "10.0.0.3", 10000),
                       make("eth1", 3, "10.1.0.3", 25000), make("docker0", 4, "172.17.0.1", 0)}};
  std::vector<ProbeResult> probes;
  probe(probes, {0, 1}, 2, "10.0.0.3", true);
  probe(probes, {0, 1}, 2, "10.1.0.3", true);
  auto choice = choose_interfaces({host}, probes).at(0);
  EXPECT_EQ(choice.ifname, "eth1");
  EXPECT_EQ(choice.address, "10.1.0.3");
  EXPECT_EQ(choice.why,
            "node2: eth1 (25 Gb/s, reaches 2/2 peers); eth0 skipped: reaches 2/2 too, but slower (10 Gb/s); "
            "lo skipped: loopback; docker0 skipped: a container runtime's bridge");
}

TEST(NetInterfaceChoice, AtEqualReachAndSpeedTheFirstByIndexWinsAndUnknownSpeedIsLast) {
  HostInterfaces host{0, "node0",
                      {make("eth1", 3, "10.1.0.1", 10000), make("eth0", 2, "10.0.0.1", 10000),
                       make("veth9", 1, "10.9.0.1", 0)}};
  std::vector<ProbeResult> probes;
  for (const char* address : {"10.1.0.1", "10.0.0.1", "10.9.0.1"}) probe(probes, {1}, 0, address, true);
  auto choice = choose_interfaces({host}, probes).at(0);
  EXPECT_EQ(choice.ifname, "eth0");
  EXPECT_EQ(choice.why,
            "node0: eth0 (10 Gb/s, reaches 1/1 peer); eth1 skipped: reaches 1/1 too, as fast, and eth0 comes "
            "first; veth9 skipped: reaches 1/1 too, but its speed is unknown");
}

TEST(NetInterfaceChoice, WhenNoneReachesEveryoneTheOneReachingMostWinsAndWhySaysSo) {
  HostInterfaces host{3, "node3",
                      {make("eth0", 2, "10.0.0.4", 25000), make("eth1", 3, "10.1.0.4", 10000)}};
  std::vector<ProbeResult> probes;
  probe(probes, {0}, 3, "10.0.0.4", true);
  probe(probes, {1, 2}, 3, "10.0.0.4", false);
  probe(probes, {0, 1}, 3, "10.1.0.4", true);
  probe(probes, {2}, 3, "10.1.0.4", false);
  auto choice = choose_interfaces({host}, probes).at(0);
  EXPECT_EQ(choice.ifname, "eth1");
  EXPECT_EQ(choice.reached_by, 2);
  EXPECT_EQ(choice.probed_by, 3);
  EXPECT_EQ(choice.why,
            "node3: eth1 (10 Gb/s, reaches 2/3 peers, the most of any interface; none reaches all); "
            "eth0 skipped: reaches 1/3");
}

TEST(NetInterfaceChoice, AnInterfaceReachesAPeerThroughAnyOfItsAddresses) {
  Interface eth0 = make("eth0", 2, "10.0.0.4", 10000);
  eth0.addresses.push_back("10.0.1.4");
  HostInterfaces host{1, "node1", {eth0, make("eth1", 3, "10.1.0.4", 10000)}};
  std::vector<ProbeResult> probes;
  probe(probes, {0}, 1, "10.0.0.4", true);
  probe(probes, {2}, 1, "10.0.1.4", true);
  probe(probes, {0, 2}, 1, "10.1.0.4", false);
  probe(probes, {1}, 1, "10.1.0.4", true);  // a host reaching itself does not count
  auto choice = choose_interfaces({host}, probes).at(0);
  EXPECT_EQ(choice.ifname, "eth0");
  EXPECT_EQ(choice.address, "10.0.0.4");
  EXPECT_EQ(choice.reached_by, 2);
  EXPECT_EQ(choice.probed_by, 2);
}

TEST(NetInterfaceChoice, NobodyReachedAnyCandidate) {
  HostInterfaces host{1, "node1", {make("lo", 1, "127.0.0.1", 0), make("eth0", 2, "10.0.0.2", 10000)}};
  std::vector<ProbeResult> probes;
  probe(probes, {0, 2}, 1, "10.0.0.2", false);
  auto choice = choose_interfaces({host}, probes).at(0);
  EXPECT_EQ(choice.ifname, "");
  EXPECT_EQ(choice.address, "");
  EXPECT_EQ(choice.reached_by, 0);
  EXPECT_EQ(choice.probed_by, 2);
  EXPECT_EQ(choice.why,
            "node1: no interface was reached by any of the 2 peers that probed it; eth0 skipped: reaches 0/2; "
            "lo skipped: loopback");
}

TEST(NetInterfaceChoice, AHostNobodyProbedGetsItsFastestCandidate) {
  HostInterfaces lonely{0, "node0",
                        {make("lo", 1, "127.0.0.1", 0), make("eth0", 2, "10.0.0.1", 10000),
                         make("eth1", 3, "10.1.0.1", 25000)}};
  HostInterfaces bare{1, "node1", {make("lo", 1, "127.0.0.1", 0)}};
  auto choices = choose_interfaces({lonely, bare}, {});
  ASSERT_EQ(choices.size(), 2u);
  EXPECT_EQ(choices[0].ifname, "eth1");
  EXPECT_EQ(choices[0].probed_by, 0);
  EXPECT_EQ(choices[0].why,
            "node0: eth1 (25 Gb/s, not probed by any peer); eth0 skipped: slower (10 Gb/s); lo skipped: loopback");
  EXPECT_EQ(choices[1].ifname, "");
  EXPECT_EQ(choices[1].why, "node1: no candidate interface; lo skipped: loopback");
}

TEST(NetInterfaceChoice, OneChoicePerHostInTheOrderGiven) {
  std::vector<HostInterfaces> hosts = {{2, "c", {make("eth0", 2, "10.0.0.3", 0)}},
                                       {0, "a", {make("eth0", 2, "10.0.0.1", 0)}},
                                       {1, "b", {make("eth0", 2, "10.0.0.2", 0)}}};
  std::vector<ProbeResult> probes;
  probe(probes, {0, 1}, 2, "10.0.0.3", true);
  probe(probes, {1, 2}, 0, "10.0.0.1", true);
  probe(probes, {0, 2}, 1, "10.0.0.2", true);
  auto choices = choose_interfaces(hosts, probes);
  ASSERT_EQ(choices.size(), 3u);
  EXPECT_EQ(choices[0].host, "c");
  EXPECT_EQ(choices[0].address, "10.0.0.3");
  EXPECT_EQ(choices[1].host, "a");
  EXPECT_EQ(choices[1].address, "10.0.0.1");
  EXPECT_EQ(choices[2].host, "b");
  EXPECT_EQ(choices[2].address, "10.0.0.2");
  for (const auto& choice : choices) EXPECT_EQ(choice.reached_by, 2) << choice.why;
}

std::vector<int> slots(int count, int stride = 1) {
  std::vector<int> joined;
  for (int i = 0; i < count; ++i) joined.push_back(i * stride);
  return joined;
}

TEST(NetInterfaceChoice, ProbersOfASmallJobAreEveryOtherSlot) {
  EXPECT_EQ(probers_of(1, {0, 1, 2, 3}), (std::vector<int>{0, 2, 3}));
  EXPECT_EQ(probers_of(0, {0}), std::vector<int>{});
  auto joined = slots(33);
  auto probers = probers_of(32, joined);
  EXPECT_EQ(probers.size(), 32u);
  EXPECT_EQ(std::count(probers.begin(), probers.end(), 32), 0);
}

TEST(NetInterfaceChoice, ProbersOfALargeJobAreTheNext32WrappingAndNeverTheTarget) {
  auto joined = slots(1024, 2);  // slots 0, 2, ..., 2046
  auto probers = probers_of(100, joined);
  ASSERT_EQ(probers.size(), static_cast<std::size_t>(kAllProbeLimit));
  EXPECT_EQ(probers.front(), 102);
  EXPECT_EQ(probers.back(), 164);
  auto wrapped = probers_of(2040, joined);
  EXPECT_EQ(wrapped, (std::vector<int>{2042, 2044, 2046, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24,
                                       26, 28, 30, 32, 34, 36, 38, 40, 42, 44, 46, 48, 50, 52, 54, 56}));
  auto edge = slots(34);
  for (int target : edge) {
    auto of = probers_of(target, edge);
    EXPECT_EQ(of.size(), 32u);
    EXPECT_EQ(std::set<int>(of.begin(), of.end()).size(), 32u);
    EXPECT_EQ(std::count(of.begin(), of.end(), target), 0) << target;
  }
}

TEST(NetInterfaceChoice, EveryHostIsProbedBy32AndProbesWhatProbersOfSays) {
  for (int count : {5, 33, 34, 100}) {
    auto joined = slots(count, 3);
    for (int prober : joined) {
      auto targets = probe_targets_of(prober, joined);
      for (int target : joined) {
        auto of = probers_of(target, joined);
        bool probes_it = std::find(of.begin(), of.end(), prober) != of.end();
        bool listed = std::find(targets.begin(), targets.end(), target) != targets.end();
        EXPECT_EQ(probes_it, listed) << count << " nodes: " << prober << " -> " << target;
      }
      EXPECT_EQ(targets.size(), static_cast<std::size_t>(std::min(count - 1, kAllProbeLimit)));
    }
  }
  EXPECT_EQ(probe_targets_of(7, {0, 1, 2}), std::vector<int>{});
}

}  // namespace
}  // namespace dlaunch::net
