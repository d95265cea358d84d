#include "net/interfaces.h"

#include <algorithm>
#include <arpa/inet.h>
#include <array>
#include <cerrno>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <fmt/format.h>
#include <ifaddrs.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <map>
#include <net/if.h>
#include <netinet/in.h>
#include <string_view>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "util/error.h"
#include "util/fd.h"
#include "util/strings.h"

namespace dlaunch::net {
namespace {

// ---- Which names belong to container runtimes ------------------------------

enum class Match { kPrefix, kExact, kDockerNetwork };

struct RuntimeName {
  std::string_view name;
  Match match;
  std::string_view owner;  // whose device it is, for the reader of this table
};

// Bridges, veths and tunnels that container runtimes and Kubernetes network
// plugins create on a node. Their addresses are private to the node (a
// docker0 at 172.17.0.1 exists on every host with Docker), so a peer that
// "reaches" one reaches itself, and NCCL's own default excludes docker* for
// the same reason. Matched by name whatever their kind (bridge, veth, vxlan,
// ipip, dummy): the kind alone would also exclude a host's own bridge
// ("br0", which carries the node's address on many clusters), which is kept.
constexpr std::array<RuntimeName, 16> kRuntimeNames = {{
    {"docker", Match::kPrefix, "Docker: docker0, docker_gwbridge"},
    {"br-", Match::kDockerNetwork, "Docker's user-defined networks: br-<12 hex digits of the network id>"},
    {"virbr", Match::kPrefix, "libvirt's NAT bridges"},
    {"cni", Match::kPrefix, "the CNI bridge plugin: cni0, cni-podman0"},
    {"podman", Match::kPrefix, "Podman's networks"},
    {"lxcbr", Match::kPrefix, "LXC"},
    {"lxdbr", Match::kPrefix, "LXD"},
    {"cali", Match::kPrefix, "Calico's pod veths"},
    {"vxlan.calico", Match::kExact, "Calico's VXLAN overlay"},
    {"tunl0", Match::kExact, "Calico's IP-in-IP overlay (the ipip module's fallback device)"},
    {"flannel", Match::kPrefix, "flannel: flannel.1, flannel-wg"},
    {"cilium_", Match::kPrefix, "Cilium: cilium_host, cilium_net, cilium_vxlan"},
    {"weave", Match::kExact, "Weave Net's bridge"},
    {"kube-bridge", Match::kExact, "kube-router's bridge"},
    {"kube-ipvs0", Match::kExact, "kube-proxy's IPVS dummy, which holds every service address"},
    {"nodelocaldns", Match::kExact, "NodeLocal DNSCache's dummy"},
}};

bool is_docker_network_name(std::string_view name) {
  if (!name.starts_with("br-") || name.size() != 3 + 12) return false;
  return std::all_of(name.begin() + 3, name.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

// ---- Reading the kernel's facts --------------------------------------------

std::string dotted_quad(const sockaddr* address) {
  sockaddr_in inet{};
  std::memcpy(&inet, address, sizeof(inet));
  char text[INET_ADDRSTRLEN] = {};
  if (::inet_ntop(AF_INET, &inet.sin_addr, text, sizeof(text)) == nullptr) return "";
  return text;
}

ifreq request_for(const std::string& name) {
  ifreq request{};
  std::strncpy(request.ifr_name, name.c_str(), IFNAMSIZ - 1);
  return request;
}

// One SIOCETHTOOL call with DATA as the command buffer; false when the driver
// does not answer it (EOPNOTSUPP for loopback and dummies, ENODEV, ...).
bool ethtool(int fd, const std::string& name, void* data) {
  ifreq request = request_for(name);
  request.ifr_data = static_cast<char*>(data);
  return ::ioctl(fd, SIOCETHTOOL, &request) == 0;
}

// A speed as the kernel reports it: 0 and SPEED_UNKNOWN (all ones, also what
// a link without carrier says) are unknown.
int speed_from(std::uint32_t speed) {
  if (speed == 0 || speed == static_cast<std::uint32_t>(SPEED_UNKNOWN) || speed > INT_MAX) return 0;
  return static_cast<int>(speed);
}

// ETHTOOL_GLINKSETTINGS, with its handshake: the first call, with no room for
// the link mode masks, makes the kernel say how many words they take (as a
// negative count); the second asks again with that room. Kernels before 4.9
// do not know the command: nullopt, and the caller asks ETHTOOL_GSET.
std::optional<int> link_settings_speed(int fd, const std::string& name) {
  constexpr std::size_t kMaxWords = SCHAR_MAX;
  alignas(ethtool_link_settings) std::array<std::byte, sizeof(ethtool_link_settings) + 3 * kMaxWords * 4> buffer{};
  ethtool_link_settings settings{};
  settings.cmd = ETHTOOL_GLINKSETTINGS;
  std::memcpy(buffer.data(), &settings, sizeof(settings));
  if (!ethtool(fd, name, buffer.data())) return std::nullopt;
  std::memcpy(&settings, buffer.data(), sizeof(settings));
  if (settings.link_mode_masks_nwords >= 0 || settings.cmd != ETHTOOL_GLINKSETTINGS) return std::nullopt;
  settings.link_mode_masks_nwords = static_cast<std::int8_t>(-settings.link_mode_masks_nwords);
  std::memcpy(buffer.data(), &settings, sizeof(settings));
  if (!ethtool(fd, name, buffer.data())) return std::nullopt;
  std::memcpy(&settings, buffer.data(), sizeof(settings));
  return speed_from(settings.speed);
}

int link_speed(int fd, const std::string& name) {
  if (auto speed = link_settings_speed(fd, name)) return *speed;
  ethtool_cmd command{};
  command.cmd = ETHTOOL_GSET;
  if (!ethtool(fd, name, &command)) return 0;
  return speed_from(ethtool_cmd_speed(&command));
}

std::string driver_name(int fd, const std::string& name) {
  ethtool_drvinfo info{};
  info.cmd = ETHTOOL_GDRVINFO;
  if (!ethtool(fd, name, &info)) return "";
  info.driver[sizeof(info.driver) - 1] = '\0';
  return info.driver;
}

int link_mtu(int fd, const std::string& name) {
  ifreq request = request_for(name);
  if (::ioctl(fd, SIOCGIFMTU, &request) != 0) return 0;
  return request.ifr_mtu;
}

// Everything getifaddrs says, by interface name: flags, the index, and the
// IPv4 addresses in the kernel's order. Alias labels ("eth0:1") are the
// addresses of their interface.
std::map<std::string, Interface> interfaces_from_getifaddrs() {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) throw util::system_error("cannot list this host's network interfaces (getifaddrs)", errno);
  std::map<std::string, Interface> by_name;
  for (const ifaddrs* entry = list; entry != nullptr; entry = entry->ifa_next) {
    std::string name = entry->ifa_name;
    const bool alias = name.find(':') != std::string::npos;
    name = name.substr(0, name.find(':'));
    Interface& interface = by_name[name];
    interface.name = name;
    if (!alias) {
      interface.up = (entry->ifa_flags & IFF_UP) && (entry->ifa_flags & IFF_RUNNING);
      interface.loopback = (entry->ifa_flags & IFF_LOOPBACK) != 0;
    }
    if (entry->ifa_addr != nullptr && entry->ifa_addr->sa_family == AF_INET) {
      std::string address = dotted_quad(entry->ifa_addr);
      if (!address.empty()) interface.addresses.push_back(address);
    }
  }
  ::freeifaddrs(list);
  return by_name;
}

}  // namespace

std::vector<Interface> list_interfaces() {
  std::map<std::string, Interface> by_name = interfaces_from_getifaddrs();
  // Not /sys/class/net: a process that entered a network namespace with
  // `nsenter --net` (as the test bed's nodes do) without remounting /sys sees
  // there the devices of the namespace /sys was mounted from. An ioctl on a
  // socket answers for the namespace the socket was made in, which is the
  // caller's; on a real host it gives the same facts sysfs does.
  util::Fd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  std::vector<Interface> interfaces;
  for (auto& [name, interface] : by_name) {
    interface.index = static_cast<int>(::if_nametoindex(name.c_str()));
    if (fd) {
      interface.mtu = link_mtu(fd.get(), name);
      interface.speed_mbps = link_speed(fd.get(), name);
      interface.kind = driver_name(fd.get(), name);
    }
    interface.excluded = exclusion_reason(interface);
    interfaces.push_back(std::move(interface));
  }
  std::stable_sort(interfaces.begin(), interfaces.end(),
                   [](const Interface& a, const Interface& b) { return a.index < b.index; });
  return interfaces;
}

bool is_container_runtime_interface(const std::string& name) {
  return std::any_of(kRuntimeNames.begin(), kRuntimeNames.end(), [&](const RuntimeName& entry) {
    switch (entry.match) {
      case Match::kPrefix: return name.starts_with(entry.name);
      case Match::kExact: return name == entry.name;
      case Match::kDockerNetwork: return is_docker_network_name(name);
    }
    return false;
  });
}

std::string exclusion_reason(const Interface& interface) {
  if (interface.loopback) return "loopback";
  if (is_container_runtime_interface(interface.name)) return "a container runtime's bridge";
  if (!interface.up) return "down";
  if (interface.addresses.empty()) return "no IPv4 address";
  return "";
}

std::string describe_speed(int speed_mbps) {
  if (speed_mbps <= 0) return "speed unknown";
  if (speed_mbps < 1000) return fmt::format("{} Mb/s", speed_mbps);
  if (speed_mbps % 1000 == 0) return fmt::format("{} Gb/s", speed_mbps / 1000);
  return fmt::format("{:g} Gb/s", speed_mbps / 1000.0);
}

std::string describe_interfaces(const std::vector<Interface>& interfaces) {
  if (interfaces.empty()) return "none";
  std::vector<std::string> parts;
  for (const auto& interface : interfaces) {
    if (interface.loopback) {
      parts.push_back(interface.name + " (loopback)");
      continue;
    }
    std::vector<std::string> facts{interface.up ? "up" : "down"};
    facts.insert(facts.end(), interface.addresses.begin(), interface.addresses.end());
    parts.push_back(fmt::format("{} ({})", interface.name, util::join(facts, ", ")));
  }
  return util::join(parts, ", ");
}

namespace {

// ---- The user's NCCL_SOCKET_IFNAME / GLOO_SOCKET_IFNAME --------------------

const Interface* find_interface(const std::vector<Interface>& interfaces, std::string_view name) {
  for (const auto& interface : interfaces)
    if (interface.name == name) return &interface;
  return nullptr;
}

std::vector<std::string> names_in(const std::string& list) {
  std::vector<std::string> names;
  for (const auto& part : util::split(list, ',')) {
    std::string name(util::trim(part));
    if (!name.empty()) names.push_back(name);
  }
  return names;
}

// NCCL's list, parsed as NCCL's ncclParseStringList and matchIfList read it.
struct NcclList {
  bool exclude = false;  // "^": every interface but these
  bool exact = false;    // "=": whole names, not prefixes
  std::vector<std::string> names;
};

NcclList parse_nccl_list(std::string value) {
  NcclList list;
  list.exclude = value.starts_with('^');
  if (list.exclude) value.erase(0, 1);
  list.exact = value.starts_with('=');
  if (list.exact) value.erase(0, 1);
  for (auto name : names_in(value)) list.names.push_back(name.substr(0, name.find(':')));  // "eth0:29500"
  return list;
}

bool nccl_matches(const NcclList& list, const std::string& name) {
  if (list.names.empty()) return true;  // NCCL: an empty list matches every interface
  return std::any_of(list.names.begin(), list.names.end(), [&](const std::string& entry) {
    return list.exact ? name == entry : name.starts_with(entry);
  });
}

std::string names_of(const std::vector<const Interface*>& interfaces) {
  std::vector<std::string> names;
  for (const auto* interface : interfaces) names.push_back(interface->name);
  return util::join(names, ", ");
}

std::string what_to_do(const std::string& variable) {
  return fmt::format(
      "unset {} to let the rendezvous choose each host's interface by reachability, or set it to an "
      "interface that is up on every host",
      variable);
}

std::optional<std::string> nccl_problem(const std::string& variable, const std::string& value,
                                        const std::string& host, const std::vector<Interface>& interfaces) {
  NcclList list = parse_nccl_list(value);
  std::vector<const Interface*> used;
  for (const auto& interface : interfaces)
    if (nccl_matches(list, interface.name) != list.exclude) used.push_back(&interface);
  const std::string setting = fmt::format("{}={}", variable, value);
  const std::string has = fmt::format("{} has {}", host, describe_interfaces(interfaces));
  if (list.exclude) {
    bool any = std::any_of(used.begin(), used.end(), [](const Interface* i) { return i->up && !i->loopback; });
    if (any) return std::nullopt;
    return fmt::format("{} excludes every interface of {} that is up, but the loopback ({}); {}", setting,
                       host, has, what_to_do(variable));
  }
  if (used.empty())
    return fmt::format("{} matches no interface of {} ({}); {}", setting, host, has, what_to_do(variable));
  if (std::none_of(used.begin(), used.end(), [](const Interface* i) { return i->up; }))
    return fmt::format("{} matches only interfaces that are down on {} ({}); {}; {}", setting, host,
                       names_of(used), has, what_to_do(variable));
  return std::nullopt;
}

std::optional<std::string> gloo_problem(const std::string& variable, const std::string& value,
                                        const std::string& host, const std::vector<Interface>& interfaces) {
  std::vector<std::string> missing;
  std::vector<std::string> down;
  const std::vector<std::string> names = names_in(value);
  for (const auto& name : names) {
    const Interface* interface = find_interface(interfaces, name);
    if (interface == nullptr) missing.push_back(name);
    else if (!interface->up) down.push_back(name);
  }
  const std::string has = fmt::format("{} has {}", host, describe_interfaces(interfaces));
  const std::string setting = fmt::format("{}={}", variable, value);
  if (names.empty())
    return fmt::format("{} names no interface ({}); {}", setting, has, what_to_do(variable));
  if (missing.empty() && down.empty()) return std::nullopt;
  std::vector<std::string> faults;
  if (!missing.empty())
    faults.push_back(fmt::format("{} {} not on {}", util::join(missing, ", "), missing.size() == 1 ? "is" : "are",
                                 host));
  if (!down.empty())
    faults.push_back(fmt::format("{} {} down there", util::join(down, ", "), down.size() == 1 ? "is" : "are"));
  return fmt::format("{} names interfaces that must all exist and be up, but {} ({}); {}", setting,
                     util::join(faults, " and "), has, what_to_do(variable));
}

}  // namespace

std::optional<std::string> socket_ifname_problem(const std::string& variable, const std::string& value,
                                                 const std::string& host,
                                                 const std::vector<Interface>& interfaces) {
  if (variable.starts_with("NCCL")) return nccl_problem(variable, value, host, interfaces);
  return gloo_problem(variable, value, host, interfaces);
}

}  // namespace dlaunch::net
