// This host's interfaces: which ones are never chosen and why, how they read
// in messages, a user's NCCL_SOCKET_IFNAME / GLOO_SOCKET_IFNAME checked
// against them, and the live list of the machine running the test.
#include "net/interfaces.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "../test_support/text.h"

namespace dlaunch::net {
namespace {

using test_support::contains;

Interface make(std::string name, int index, std::vector<std::string> addresses, bool up = true,
               int speed_mbps = 0) {
  Interface interface;
  interface.name = std::move(name);
  interface.index = index;
  interface.addresses = std::move(addresses);
  interface.up = up;
  interface.speed_mbps = speed_mbps;
  interface.loopback = interface.name == "lo";
  interface.excluded = exclusion_reason(interface);
  return interface;
}

// A node with a loopback, two NICs, a dead one and Docker's bridges.
std::vector<Interface> node_interfaces() {
  return {make("lo", 1, {"127.0.0.1"}),
          make("eth0", 2, {"10.0.0.5"}, true, 10000),
          make("eth1", 3, {"10.1.0.5"}, true, 25000),
          make("eth2", 4, {}, false),
          make("docker0", 5, {"172.17.0.1"}, false),
          make("br-0123456789ab", 6, {"172.18.0.1"}, true)};
}

TEST(NetInterfaces, ExclusionReasons) {
  struct Case {
    Interface interface;
    std::string reason;
  };
  Interface bridge = make("br0", 7, {"10.0.0.9"});
  bridge.kind = "bridge";
  const std::vector<Case> cases = {
      {make("lo", 1, {"127.0.0.1"}), "loopback"},
      {make("eth0", 2, {"10.0.0.5"}), ""},
      {make("eth0", 2, {"10.0.0.5"}, false), "down"},
      {make("eth0", 2, {}), "no IPv4 address"},
      {make("docker0", 3, {"172.17.0.1"}), "a container runtime's bridge"},
      {make("docker_gwbridge", 3, {"172.19.0.1"}), "a container runtime's bridge"},
      {make("br-0123456789ab", 4, {"172.18.0.1"}), "a container runtime's bridge"},
      {make("br-0123", 4, {"172.18.0.1"}), ""},            // not 12 hex digits: someone's own bridge
      {make("br-0123456789xy", 4, {"172.18.0.1"}), ""},    // not hex
      {bridge, ""},                                         // a host bridge with the node's address
      {make("virbr0", 5, {"192.168.122.1"}), "a container runtime's bridge"},
      {make("cni0", 6, {"10.244.0.1"}), "a container runtime's bridge"},
      {make("podman1", 6, {"10.88.0.1"}), "a container runtime's bridge"},
      {make("lxcbr0", 6, {"10.0.3.1"}), "a container runtime's bridge"},
      {make("lxdbr0", 6, {"10.0.4.1"}), "a container runtime's bridge"},
      {make("cali1a2b3c", 6, {"10.0.5.1"}), "a container runtime's bridge"},
      {make("flannel.1", 6, {"10.244.0.0"}), "a container runtime's bridge"},
      {make("cilium_host", 6, {"10.0.6.1"}), "a container runtime's bridge"},
      {make("weave", 6, {"10.32.0.1"}), "a container runtime's bridge"},
      {make("kube-bridge", 6, {"10.0.7.1"}), "a container runtime's bridge"},
      {make("vxlan.calico", 6, {"10.0.8.1"}), "a container runtime's bridge"},
      {make("tunl0", 6, {"10.0.9.1"}), "a container runtime's bridge"},
      {make("kube-ipvs0", 6, {"10.96.0.1"}), "a container runtime's bridge"},
      {make("weave2", 6, {"10.0.0.7"}), ""},  // weave is one exact name
  };
  for (const auto& c : cases) EXPECT_EQ(exclusion_reason(c.interface), c.reason) << c.interface.name;
}

TEST(NetInterfaces, ALoopbackIsExcludedAsLoopbackWhateverItsName) {
  Interface interface = make("weird", 1, {"127.0.0.1"});
  interface.loopback = true;
  EXPECT_EQ(exclusion_reason(interface), "loopback");
}

TEST(NetInterfaces, DescribeSpeed) {
  EXPECT_EQ(describe_speed(25000), "25 Gb/s");
  EXPECT_EQ(describe_speed(100), "100 Mb/s");
  EXPECT_EQ(describe_speed(2500), "2.5 Gb/s");
  EXPECT_EQ(describe_speed(1000), "1 Gb/s");
  EXPECT_EQ(describe_speed(400000), "400 Gb/s");
  EXPECT_EQ(describe_speed(0), "speed unknown");
  EXPECT_EQ(describe_speed(-1), "speed unknown");
}

TEST(NetInterfaces, DescribeInterfaces) {
  std::vector<Interface> interfaces = {make("eth0", 2, {"10.0.0.5"}), make("docker0", 3, {}, false),
                                       make("lo", 1, {"127.0.0.1"})};
  EXPECT_EQ(describe_interfaces(interfaces), "eth0 (up, 10.0.0.5), docker0 (down), lo (loopback)");
  EXPECT_EQ(describe_interfaces({make("eth0", 2, {"10.0.0.5", "10.0.0.6"})}), "eth0 (up, 10.0.0.5, 10.0.0.6)");
  EXPECT_EQ(describe_interfaces({}), "none");
}

TEST(NetInterfaces, NcclPrefixesThatMatchAnUpInterfaceAreFine) {
  auto interfaces = node_interfaces();
  EXPECT_EQ(socket_ifname_problem("NCCL_SOCKET_IFNAME", "eth", "node2", interfaces), std::nullopt);
  EXPECT_EQ(socket_ifname_problem("NCCL_SOCKET_IFNAME", "eth1", "node2", interfaces), std::nullopt);
  EXPECT_EQ(socket_ifname_problem("NCCL_SOCKET_IFNAME", "=eth0", "node2", interfaces), std::nullopt);
  EXPECT_EQ(socket_ifname_problem("NCCL_SOCKET_IFNAME", "ib,eth0", "node2", interfaces), std::nullopt);
  EXPECT_EQ(socket_ifname_problem("NCCL_SOCKET_IFNAME", "eth0:29500", "node2", interfaces), std::nullopt);
}

TEST(NetInterfaces, NcclNamesNoInterface) {
  auto problem = socket_ifname_problem("NCCL_SOCKET_IFNAME", "nope", "node2", node_interfaces());
  ASSERT_TRUE(problem);
  EXPECT_TRUE(contains(*problem, "NCCL_SOCKET_IFNAME=nope matches no interface of node2")) << *problem;
  EXPECT_TRUE(contains(*problem, "eth0 (up, 10.0.0.5)")) << *problem;
  EXPECT_TRUE(contains(*problem, "unset NCCL_SOCKET_IFNAME")) << *problem;
  EXPECT_EQ(problem->find('\n'), std::string::npos);
}

TEST(NetInterfaces, NcclExactNamesDoNotMatchPrefixes) {
  auto problem = socket_ifname_problem("NCCL_SOCKET_IFNAME", "=eth", "node2", node_interfaces());
  ASSERT_TRUE(problem);
  EXPECT_TRUE(contains(*problem, "matches no interface of node2")) << *problem;
}

TEST(NetInterfaces, NcclNamingOnlyADownInterfaceIsRefused) {
  auto problem = socket_ifname_problem("NCCL_SOCKET_IFNAME", "eth2", "node2", node_interfaces());
  ASSERT_TRUE(problem);
  EXPECT_TRUE(contains(*problem, "NCCL_SOCKET_IFNAME=eth2 matches only interfaces that are down on node2 (eth2)"))
      << *problem;
  problem = socket_ifname_problem("NCCL_SOCKET_IFNAME", "docker", "node2", node_interfaces());
  ASSERT_TRUE(problem);
  EXPECT_TRUE(contains(*problem, "down on node2 (docker0)")) << *problem;
}

TEST(NetInterfaces, NcclExclusionListsAreFineWhileAnUpInterfaceRemains) {
  auto interfaces = node_interfaces();
  EXPECT_EQ(socket_ifname_problem("NCCL_SOCKET_IFNAME", "^docker", "node2", interfaces), std::nullopt);
  EXPECT_EQ(socket_ifname_problem("NCCL_SOCKET_IFNAME", "^docker,lo", "node2", interfaces), std::nullopt);
  EXPECT_EQ(socket_ifname_problem("NCCL_SOCKET_IFNAME", "^=eth0", "node2", interfaces), std::nullopt);
  auto problem = socket_ifname_problem("NCCL_SOCKET_IFNAME", "^eth,br", "node2", interfaces);
  ASSERT_TRUE(problem);
  EXPECT_TRUE(contains(*problem, "NCCL_SOCKET_IFNAME=^eth,br excludes every interface of node2 that is up, but "
                                 "the loopback"))
      << *problem;
}

TEST(NetInterfaces, GlooNamesMustAllExistAndBeUp) {
  auto interfaces = node_interfaces();
  EXPECT_EQ(socket_ifname_problem("GLOO_SOCKET_IFNAME", "eth0", "node2", interfaces), std::nullopt);
  EXPECT_EQ(socket_ifname_problem("GLOO_SOCKET_IFNAME", "eth0,eth1", "node2", interfaces), std::nullopt);
  auto problem = socket_ifname_problem("GLOO_SOCKET_IFNAME", "eth", "node2", interfaces);
  ASSERT_TRUE(problem);  // exact names, not prefixes
  EXPECT_TRUE(contains(*problem, "GLOO_SOCKET_IFNAME=eth names interfaces that must all exist and be up, but "
                                 "eth is not on node2"))
      << *problem;
  problem = socket_ifname_problem("GLOO_SOCKET_IFNAME", "nope", "node2", interfaces);
  ASSERT_TRUE(problem);
  EXPECT_TRUE(contains(*problem, "nope is not on node2")) << *problem;
  EXPECT_TRUE(contains(*problem, "node2 has lo (loopback), eth0 (up, 10.0.0.5)")) << *problem;
  problem = socket_ifname_problem("GLOO_SOCKET_IFNAME", "eth0,eth2,ib0", "node2", interfaces);
  ASSERT_TRUE(problem);
  EXPECT_TRUE(contains(*problem, "ib0 is not on node2 and eth2 is down there")) << *problem;
  EXPECT_TRUE(contains(*problem, "unset GLOO_SOCKET_IFNAME")) << *problem;
  problem = socket_ifname_problem("GLOO_SOCKET_IFNAME", ",", "node2", interfaces);
  ASSERT_TRUE(problem);
  EXPECT_TRUE(contains(*problem, "names no interface")) << *problem;
}

// The machine running the test has a loopback, whatever else it has.
TEST(NetInterfaces, ListInterfacesFindsTheLoopback) {
  auto interfaces = list_interfaces();
  auto lo = std::find_if(interfaces.begin(), interfaces.end(), [](const Interface& i) { return i.name == "lo"; });
  ASSERT_NE(lo, interfaces.end()) << describe_interfaces(interfaces);
  EXPECT_TRUE(lo->loopback);
  EXPECT_EQ(lo->excluded, "loopback");
  EXPECT_GT(lo->index, 0);
  EXPECT_GT(lo->mtu, 0);
  EXPECT_NE(std::find(lo->addresses.begin(), lo->addresses.end(), "127.0.0.1"), lo->addresses.end());
  EXPECT_TRUE(std::is_sorted(interfaces.begin(), interfaces.end(),
                             [](const Interface& a, const Interface& b) { return a.index < b.index; }));
}

}  // namespace
}  // namespace dlaunch::net
