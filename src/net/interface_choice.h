// Which interface each host's workers use, chosen from what the other hosts
// could reach: every host lists its interfaces, some peers probe each
// host's candidate addresses, and the interface most peers reached wins
// (then the fastest, then the first). Pure, no I/O: the rendezvous gathers
// the lists and the probes, this decides, and `why` says it in one line.
#pragma once

#include <string>
#include <vector>

#include "net/interfaces.h"

namespace dlaunch::net {

struct HostInterfaces {
  int slot = 0;
  std::string host;
  std::vector<Interface> interfaces;
};

// One peer's attempt to connect to one address of another host.
struct ProbeResult {
  int from_slot = 0;
  int to_slot = 0;
  std::string address;
  bool reached = false;
};

struct InterfaceChoice {
  int slot = 0;
  std::string host;
  std::string ifname;    // "" when no candidate reached anyone (then address is "" too)
  std::string address;   // the chosen interface's first IPv4 address
  int reached_by = 0;    // peers that reached it
  int probed_by = 0;     // peers that probed this host
  // One line: "node2: eth1 (25 Gb/s, reaches 15/15 peers); eth0 skipped: reaches 3/15;
  // docker0 skipped: a container runtime's bridge; lo skipped: loopback"
  std::string why;
};

// For each host: its candidate interfaces (excluded empty) ranked by how many
// probing peers reached any of its addresses (more first), then speed (faster
// first, unknown last), then index. An interface "reaches" a peer when that
// peer's probe of any of its addresses succeeded; a host's probes of itself
// do not count. A host nobody probed (a single host, a late joiner) gets its
// best candidate by speed then index, and `why` says "not probed". Returns
// one choice per host, in the order given.
std::vector<InterfaceChoice> choose_interfaces(const std::vector<HostInterfaces>& hosts,
                                               const std::vector<ProbeResult>& probes);

// Which slots probe TARGET_SLOT among JOINED (sorted slots): every other slot
// when there are at most kAllProbeLimit+1 (=33) of them, else the
// kAllProbeLimit slots that follow TARGET_SLOT in JOINED's order, wrapping.
// Keeps the probes O(N) per host at 1024 nodes. Never includes TARGET_SLOT.
inline constexpr int kAllProbeLimit = 32;
std::vector<int> probers_of(int target_slot, const std::vector<int>& joined);

// The inverse of probers_of: the slots PROBER_SLOT probes among JOINED (every
// T with PROBER_SLOT in probers_of(T, JOINED)), in JOINED's order. Every other
// slot when there are at most 33, else the kAllProbeLimit slots before it,
// wrapping.
std::vector<int> probe_targets_of(int prober_slot, const std::vector<int>& joined);

}  // namespace dlaunch::net
