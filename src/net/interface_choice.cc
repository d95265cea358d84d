#include "net/interface_choice.h"

#include <algorithm>
#include <cstddef>
#include <fmt/format.h>
#include <map>
#include <set>

#include "util/strings.h"

namespace dlaunch::net {
namespace {

// One candidate interface of a host and the peers that reached it.
struct Ranked {
  const Interface* interface = nullptr;
  int reached = 0;
};

// What the probes of one host said: who probed it, and who reached which address.
struct HostProbes {
  std::set<int> probers;
  std::map<std::string, std::set<int>> reached_by_address;
};

std::map<int, HostProbes> probes_by_target(const std::vector<ProbeResult>& probes) {
  std::map<int, HostProbes> by_target;
  for (const auto& probe : probes) {
    if (probe.from_slot == probe.to_slot) continue;  // a host reaching itself proves nothing
    HostProbes& target = by_target[probe.to_slot];
    target.probers.insert(probe.from_slot);
    if (probe.reached) target.reached_by_address[probe.address].insert(probe.from_slot);
  }
  return by_target;
}

int peers_reaching(const Interface& interface, const HostProbes& probes) {
  std::set<int> peers;
  for (const auto& address : interface.addresses) {
    auto found = probes.reached_by_address.find(address);
    if (found != probes.reached_by_address.end()) peers.insert(found->second.begin(), found->second.end());
  }
  return static_cast<int>(peers.size());
}

// More peers first, then faster (unknown, 0, sorts last by itself), then the kernel's order.
bool ranks_before(const Ranked& a, const Ranked& b) {
  if (a.reached != b.reached) return a.reached > b.reached;
  if (a.interface->speed_mbps != b.interface->speed_mbps) return a.interface->speed_mbps > b.interface->speed_mbps;
  return a.interface->index < b.interface->index;
}

std::vector<Ranked> ranked_candidates(const std::vector<Interface>& interfaces, const HostProbes& probes) {
  std::vector<Ranked> ranked;
  for (const auto& interface : interfaces)
    if (interface.excluded.empty()) ranked.push_back({&interface, peers_reaching(interface, probes)});
  std::stable_sort(ranked.begin(), ranked.end(), ranks_before);
  return ranked;
}

std::string reach(int reached, int probed) { return fmt::format("reaches {}/{}", reached, probed); }

// Why OTHER lost to the chosen interface WINNER.
std::string lost_because(const Ranked& other, const Ranked& winner, int probed) {
  const bool probed_at_all = probed > 0;
  if (probed_at_all && other.reached < winner.reached) return reach(other.reached, probed);
  const std::string same_reach = probed_at_all ? reach(other.reached, probed) + " too, " : "";
  const std::string but = probed_at_all ? "but " : "";
  const int speed = other.interface->speed_mbps;
  if (speed == winner.interface->speed_mbps)
    return same_reach + fmt::format("as fast, and {} comes first", winner.interface->name);
  if (speed == 0) return same_reach + but + "its speed is unknown";
  return same_reach + but + fmt::format("slower ({})", describe_speed(speed));
}

std::string chosen_line(const Ranked& winner, int probed) {
  const std::string speed = describe_speed(winner.interface->speed_mbps);
  if (probed == 0) return fmt::format("{} ({}, not probed by any peer)", winner.interface->name, speed);
  std::string line = fmt::format("{} ({}, {} peer{}", winner.interface->name, speed, reach(winner.reached, probed),
                                 probed == 1 ? "" : "s");
  if (winner.reached < probed) line += ", the most of any interface; none reaches all";
  return line + ")";
}

// "NAME skipped: REASON" for every interface but the chosen one: the other
// candidates in rank order, then the excluded ones in the kernel's order.
std::vector<std::string> skipped_lines(const std::vector<Interface>& interfaces, const std::vector<Ranked>& ranked,
                                       const Ranked* winner, int probed) {
  std::vector<std::string> lines;
  for (const auto& candidate : ranked) {
    if (winner != nullptr && candidate.interface == winner->interface) continue;
    std::string reason = winner != nullptr ? lost_because(candidate, *winner, probed) : reach(candidate.reached, probed);
    lines.push_back(fmt::format("{} skipped: {}", candidate.interface->name, reason));
  }
  for (const auto& interface : interfaces)
    if (!interface.excluded.empty()) lines.push_back(fmt::format("{} skipped: {}", interface.name, interface.excluded));
  return lines;
}

InterfaceChoice choose_for(const HostInterfaces& host, const HostProbes& probes) {
  InterfaceChoice choice;
  choice.slot = host.slot;
  choice.host = host.host;
  choice.probed_by = static_cast<int>(probes.probers.size());
  const std::vector<Ranked> ranked = ranked_candidates(host.interfaces, probes);
  const bool reachable = !ranked.empty() && (choice.probed_by == 0 || ranked.front().reached > 0);
  const Ranked* winner = reachable ? &ranked.front() : nullptr;
  std::string head;
  if (winner != nullptr) {
    choice.ifname = winner->interface->name;
    if (!winner->interface->addresses.empty()) choice.address = winner->interface->addresses.front();
    choice.reached_by = winner->reached;
    head = chosen_line(*winner, choice.probed_by);
  } else if (ranked.empty()) {
    head = "no candidate interface";
  } else {
    head = fmt::format("no interface was reached by any of the {} peer{} that probed it", choice.probed_by,
                       choice.probed_by == 1 ? "" : "s");
  }
  std::vector<std::string> parts{head};
  for (auto& line : skipped_lines(host.interfaces, ranked, winner, choice.probed_by)) parts.push_back(std::move(line));
  choice.why = fmt::format("{}: {}", host.host, util::join(parts, "; "));
  return choice;
}

}  // namespace

std::vector<InterfaceChoice> choose_interfaces(const std::vector<HostInterfaces>& hosts,
                                               const std::vector<ProbeResult>& probes) {
  const std::map<int, HostProbes> by_target = probes_by_target(probes);
  const HostProbes none;
  std::vector<InterfaceChoice> choices;
  for (const auto& host : hosts) {
    auto found = by_target.find(host.slot);
    choices.push_back(choose_for(host, found != by_target.end() ? found->second : none));
  }
  return choices;
}

namespace {

// With at most kAllProbeLimit + 1 launchers, each probes every other one.
bool all_probe_all(const std::vector<int>& joined) {
  return joined.size() <= static_cast<std::size_t>(kAllProbeLimit) + 1;
}

std::vector<int> all_but(int slot, const std::vector<int>& joined) {
  std::vector<int> others;
  for (int other : joined)
    if (other != slot) others.push_back(other);
  return others;
}

}  // namespace

std::vector<int> probers_of(int target_slot, const std::vector<int>& joined) {
  if (all_probe_all(joined)) return all_but(target_slot, joined);
  std::vector<int> probers;
  // The kAllProbeLimit slots after the target; with more than 33 slots they
  // never wrap back around to it.
  const std::size_t n = joined.size();
  const auto start = static_cast<std::size_t>(std::upper_bound(joined.begin(), joined.end(), target_slot) - joined.begin());
  for (std::size_t step = 0; step < static_cast<std::size_t>(kAllProbeLimit); ++step)
    probers.push_back(joined[(start + step) % n]);
  return probers;
}

std::vector<int> probe_targets_of(int prober_slot, const std::vector<int>& joined) {
  if (!std::binary_search(joined.begin(), joined.end(), prober_slot)) return {};
  if (all_probe_all(joined)) return all_but(prober_slot, joined);
  std::vector<int> targets;
  // Those it follows: the kAllProbeLimit slots before it, wrapping.
  const std::size_t n = joined.size();
  const auto at = static_cast<std::size_t>(std::lower_bound(joined.begin(), joined.end(), prober_slot) - joined.begin());
  for (std::size_t step = 1; step <= static_cast<std::size_t>(kAllProbeLimit); ++step)
    targets.push_back(joined[(at + n - step) % n]);
  std::sort(targets.begin(), targets.end());
  return targets;
}

}  // namespace dlaunch::net
