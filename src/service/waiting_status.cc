#include "service/waiting_status.h"

#include <algorithm>
#include <fmt/format.h>

namespace dlaunch::rendezvous {
namespace {

using std::chrono::milliseconds;

// Nodes a line names at most; the others are counted.
constexpr std::size_t kNamedNodes = 8;

long long whole_seconds(milliseconds duration) {
  return std::chrono::duration_cast<std::chrono::seconds>(duration).count();
}

// "1 at node2", or "1" when its host is unknown.
std::string missing_node(int slot, const std::vector<std::string>& hosts) {
  const bool known = slot >= 0 && static_cast<std::size_t>(slot) < hosts.size() &&
                     !hosts[static_cast<std::size_t>(slot)].empty();
  if (!known) return fmt::format("{}", slot);
  return fmt::format("{} at {}", slot, hosts[static_cast<std::size_t>(slot)]);
}

std::string missing_list(const GatheringNodes& gathering) {
  std::vector<std::string> named;
  for (std::size_t i = 0; i < gathering.missing.size() && i < kNamedNodes; ++i)
    named.push_back(missing_node(gathering.missing[i], gathering.expected_hosts));
  std::string list = fmt::format("{}", fmt::join(named, ", "));
  if (gathering.missing.size() > kNamedNodes)
    list += fmt::format(" and {} more", gathering.missing.size() - kNamedNodes);
  return list;
}

}  // namespace

milliseconds WaitingSchedule::interval_after(milliseconds waited) const {
  if (waited < early_until) return early_interval;
  if (waited < middle_until) return middle_interval;
  return late_interval;
}

std::string gathering_line(const GatheringNodes& gathering) {
  const std::string progress =
      fmt::format("({}/{} joined, {} s of {} s)", gathering.joined, gathering.needed,
                  whole_seconds(gathering.waited), whole_seconds(gathering.timeout));
  if (gathering.missing.empty()) return fmt::format("waiting for the nodes to join {}", progress);
  if (!gathering.spares)
    return fmt::format("waiting for node rank(s) {} {}", missing_list(gathering), progress);
  // With spares any launcher will do: say how many more, then who is not here.
  const int more = std::max(1, gathering.needed - gathering.joined);
  return fmt::format("waiting for {} more launcher(s); not joined: slot(s) {} {}", more,
                     missing_list(gathering), progress);
}

std::string reaching_line(const ReachingService& reaching) {
  return fmt::format("waiting for {} at {} ({} s of {} s): {}", reaching.service, reaching.address,
                     whole_seconds(reaching.waited), whole_seconds(reaching.timeout),
                     reaching.last_seen.empty() ? "no answer yet" : reaching.last_seen);
}

}  // namespace dlaunch::rendezvous
