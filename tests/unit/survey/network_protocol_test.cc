// Protocol 6: interfaces in the Join, probes, the gate, each slot's
// interface in the World; bounds on what a peer may send.
#include "wire/protocol.h"

#include <gtest/gtest.h>

#include "rendezvous/world_check.h"
#include "wire/token.h"

namespace dlaunch::rendezvous {
namespace {

net::Interface interface(const std::string& name, const std::string& address) {
  net::Interface result;
  result.name = name;
  result.index = 2;
  result.addresses = {address};
  result.up = true;
  result.speed_mbps = 25000;
  result.mtu = 9000;
  result.kind = "veth";
  return result;
}

JoinMessage join_with_interfaces() {
  JoinMessage join;
  join.run_id = "job";
  join.host = "node2";
  join.nonce = std::string(kChallengeSize, '\x01');
  join.interfaces = {interface("eth1", "10.0.0.2"), interface("decoy0", "10.254.2.1")};
  join.interfaces[1].excluded = "down";
  join.probe_port = 41000;
  join.free_port = 42000;
  return join;
}

TEST(NetworkProtocol, JoinCarriesInterfacesAndPortsUnderItsProof) {
  JoinMessage join = join_with_interfaces();
  JoinMessage decoded = decode_join(encode(join));
  ASSERT_EQ(decoded.interfaces.size(), 2u);
  EXPECT_EQ(decoded.interfaces[0].name, "eth1");
  EXPECT_EQ(decoded.interfaces[0].addresses, std::vector<std::string>{"10.0.0.2"});
  EXPECT_EQ(decoded.interfaces[0].speed_mbps, 25000);
  EXPECT_EQ(decoded.interfaces[0].mtu, 9000);
  EXPECT_TRUE(decoded.interfaces[0].up);
  EXPECT_EQ(decoded.interfaces[1].excluded, "down");
  EXPECT_EQ(decoded.probe_port, 41000u);
  EXPECT_EQ(decoded.free_port, 42000u);
  // The proof covers them: a peer cannot swap a node's interfaces unnoticed.
  JoinMessage changed = join;
  changed.interfaces[0].addresses = {"10.9.9.9"};
  EXPECT_NE(signed_part(changed), signed_part(join));
}

TEST(NetworkProtocol, AJoinNeverReportsMoreThanTheBoundsAllow) {
  JoinMessage join = join_with_interfaces();
  join.interfaces.assign(kMostInterfaces + 10, interface("eth0", "10.0.0.1"));
  join.interfaces[0].addresses.assign(kMostAddressesPerInterface + 5, "10.0.0.1");
  JoinMessage decoded = decode_join(encode(join));
  EXPECT_EQ(decoded.interfaces.size(), kMostInterfaces);
  EXPECT_EQ(decoded.interfaces[0].addresses.size(), kMostAddressesPerInterface);
}

TEST(NetworkProtocol, ProbeAndReportRoundTrip) {
  ProbeMessage probe{3, {{1, "10.0.0.2", 41000}, {2, "10.0.0.3", 41001}}};
  ProbeMessage decoded = decode_probe(encode(probe));
  EXPECT_EQ(decoded.round, 3u);
  ASSERT_EQ(decoded.targets.size(), 2u);
  EXPECT_EQ(decoded.targets[1].address, "10.0.0.3");
  EXPECT_EQ(decoded.targets[1].port, 41001u);
  ProbeReportMessage report{3, {{1, "10.0.0.2", true}, {2, "10.0.0.3", false}}};
  ProbeReportMessage back = decode_probe_report(encode(report));
  ASSERT_EQ(back.outcomes.size(), 2u);
  EXPECT_TRUE(back.outcomes[0].reached);
  EXPECT_FALSE(back.outcomes[1].reached);
}

TEST(NetworkProtocol, ABadProbeTargetIsAProtocolError) {
  EXPECT_THROW(decode_probe(encode(ProbeMessage{0, {{1, "10.0.0.2", 0}}})), ProtocolError);
  EXPECT_THROW(decode_probe(encode(ProbeMessage{0, {{1, "10.0.0.2", 70000}}})), ProtocolError);
  EXPECT_THROW(decode_probe(encode(ProbeMessage{0, {{1, "", 80}}})), ProtocolError);
}

TEST(NetworkProtocol, GateRequestsAreChecked) {
  GateMessage gate{0, 2, 3, "10.0.0.1", 29400, 1 << 20, 60000, "eth1", std::string(kChallengeSize, 's')};
  GateMessage decoded = decode_gate(encode(gate));
  EXPECT_EQ(decoded.gate_rank, 2u);
  EXPECT_EQ(decoded.gate_size, 3u);
  EXPECT_EQ(decoded.ifname, "eth1");
  EXPECT_EQ(decoded.store_secret, gate.store_secret);
  GateMessage no_secret = gate;
  no_secret.store_secret.clear();  // every gate's store is guarded
  EXPECT_THROW(decode_gate(encode(no_secret)), ProtocolError);
  GateMessage outside = gate;
  outside.gate_rank = 3;  // not a rank of a 3-node gate
  EXPECT_THROW(decode_gate(encode(outside)), ProtocolError);
  GateMessage no_port = gate;
  no_port.master_port = 0;
  EXPECT_THROW(decode_gate(encode(no_port)), ProtocolError);
  GateReportMessage report{1, "{\"gate\":1}", "timed out"};
  EXPECT_EQ(decode_gate_report(encode(report)).error, "timed out");
}

TEST(NetworkProtocol, ProbeProofsTellTheDirectionsApart) {
  std::string challenge(kChallengeSize, 'c'), nonce(kChallengeSize, 'n');
  std::string hello = probe_proof("token", "hello", challenge, nonce, "m");
  EXPECT_NE(hello, probe_proof("token", "ack", challenge, nonce, "m"));
  EXPECT_NE(hello, probe_proof("other", "hello", challenge, nonce, "m"));
  EXPECT_NE(hello, join_proof("token", challenge, nonce, "m"));
}

TEST(NetworkProtocol, WorldCarriesEachSlotsInterface) {
  World world;
  world.nproc_per_node = {1, 1};
  world.node_slots = {0, 1};
  world.ifnames = {"eth1", "ib0"};
  world.ifaddresses = {"10.0.0.1", "10.1.0.2"};
  World decoded = decode_world(encode(world));
  EXPECT_EQ(decoded.ifnames, world.ifnames);
  EXPECT_EQ(decoded.ifaddresses, world.ifaddresses);
}

TEST(NetworkProtocol, AWorldWithAnInterfaceNameThatIsNotOneIsRefused) {
  World world;
  world.run_id = "job";
  world.heartbeat_timeout_ms = 1000;
  world.worker_master_addr = "10.0.0.1";
  world.worker_master_port = 29500;
  world.nproc_per_node = {1, 1};
  world.node_slots = {0, 1};
  WorldExpectation expected{0, 2, 0, 1, 1, "job", false, 0};
  world.ifnames = {"eth0", "eth0; rm -rf /"};
  EXPECT_TRUE(world_mismatch(world, expected).has_value());
  world.ifnames = {"eth0", "eth1"};
  world.ifaddresses = {"10.0.0.1", "not an address"};
  EXPECT_TRUE(world_mismatch(world, expected).has_value());
  world.ifaddresses = {"10.0.0.1", "10.0.0.2"};
  EXPECT_FALSE(world_mismatch(world, expected).has_value());
  world.ifnames = {"eth0", "eth1", "eth2"};  // more than the launchers
  EXPECT_TRUE(world_mismatch(world, expected).has_value());
}

}  // namespace
}  // namespace dlaunch::rendezvous
