// This host's network interfaces as values, why some of them are never used
// for training traffic, and a user's NCCL_SOCKET_IFNAME / GLOO_SOCKET_IFNAME
// checked against them. Only list_interfaces() does I/O; the rest is pure, so
// a host with bridges, tunnels and dead links is a table in a test.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace dlaunch::net {

struct Interface {
  std::string name;
  int index = 0;                       // ifindex: the kernel's order
  std::vector<std::string> addresses;  // IPv4, dotted quads, in kernel order
  bool up = false;                     // IFF_UP and IFF_RUNNING (carrier)
  int speed_mbps = 0;                  // 0: unknown (virtual links, or the driver does not say)
  int mtu = 0;
  bool loopback = false;
  std::string kind;                    // driver/link kind when known: "bridge", "veth", "" ...
  // Why it is never chosen: "loopback", "down", "no IPv4 address",
  // "a container runtime's bridge" ; empty: a candidate.
  std::string excluded;
};

// This host's interfaces, sorted by index. Reads flags and addresses with
// getifaddrs, and MTU / speed / driver with ioctls (SIOCGIFMTU, SIOCETHTOOL
// ETHTOOL_GLINKSETTINGS falling back to ETHTOOL_GSET, ETHTOOL_GDRVINFO) on a
// socket of the calling process's network namespace. Addresses of alias
// labels ("eth0:1") belong to their interface ("eth0"). A fact the driver
// does not give stays unknown (speed 0, MTU 0, kind ""). Fills `excluded`
// with exclusion_reason(). Throws SystemError when getifaddrs fails.
std::vector<Interface> list_interfaces();

// True for names container runtimes and cluster network plugins give their
// bridges and tunnels (docker0, br-0123456789ab, cni0, cali1234, ...), whose
// addresses no other host reaches. A host's own bridge ("br0") is not one.
bool is_container_runtime_interface(const std::string& name);

// The pure part, for tests: why INTERFACE is never chosen, from its other
// fields ("loopback", "a container runtime's bridge", "down",
// "no IPv4 address", checked in that order); empty for a candidate.
std::string exclusion_reason(const Interface& interface);

// "25 Gb/s", "100 Mb/s", "2.5 Gb/s", "speed unknown".
std::string describe_speed(int speed_mbps);

// One line naming every interface with its state and addresses, for errors:
// "eth0 (up, 10.0.0.5), docker0 (down, 172.17.0.1), lo (loopback)"; "none"
// for an empty list.
std::string describe_interfaces(const std::vector<Interface>& interfaces);

// A user-set NCCL_SOCKET_IFNAME or GLOO_SOCKET_IFNAME (VARIABLE=VALUE) checked
// against this host's interfaces: nullopt when it can work, else one line
// naming the variable, its value, the host and the interfaces it has, and what
// to do. NCCL's syntax (a VARIABLE starting with "NCCL"): comma-separated
// prefixes, each may end in ":PORT"; a leading "^" makes it an exclusion list
// (fine unless it excludes every up non-loopback interface), then a leading
// "=" makes every name an exact match ("^=docker0,lo"). GLOO's: comma-separated
// exact names, each must exist and be up. Any value naming only down or
// missing interfaces is refused.
std::optional<std::string> socket_ifname_problem(const std::string& variable, const std::string& value,
                                                 const std::string& host,
                                                 const std::vector<Interface>& interfaces);

}  // namespace dlaunch::net
