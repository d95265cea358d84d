#include "service/recovery_log.h"

#include <algorithm>
#include <fmt/format.h>

#include "util/local_time.h"

namespace dlaunch::rendezvous {
namespace {

// Events the timeline keeps: the first, then the latest.
constexpr std::size_t kLongestTimeline = 64;

double seconds_between(util::Clock::time_point from, util::Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

std::string host_of(const std::vector<std::string>& hosts, int slot) {
  if (slot < 0 || static_cast<std::size_t>(slot) >= hosts.size() || hosts[static_cast<std::size_t>(slot)].empty())
    return fmt::format("slot {}", slot);
  return hosts[static_cast<std::size_t>(slot)];
}

}  // namespace

std::vector<std::string> roster_changes(const Roster& roster, const std::vector<int>& before,
                                        const std::vector<std::string>& hosts, int nnodes, int min_nodes) {
  std::vector<std::string> changes;
  for (std::size_t rank = 0; rank < roster.node_slots.size(); ++rank) {
    int slot = roster.node_slots[rank];
    if (rank < before.size() && before[rank] == slot) continue;
    auto was = std::find(before.begin(), before.end(), slot);
    changes.push_back(was == before.end() ? fmt::format("{} (spare) takes node rank {}", host_of(hosts, slot), rank)
                                          : fmt::format("{} moves from node rank {} to {}", host_of(hosts, slot),
                                                        was - before.begin(), rank));
  }
  if (roster.node_slots.size() < before.size())
    changes.push_back(fmt::format("the job goes on with {} of {} nodes (--min-nodes {})", roster.node_slots.size(),
                                  nnodes, min_nodes));
  return changes;
}

RecoveryLog::RecoveryLog(std::vector<std::string> timeline) : timeline_(std::move(timeline)) {}

void RecoveryLog::add(const std::string& event) {
  if (timeline_.size() >= kLongestTimeline) timeline_.erase(timeline_.begin() + 1);  // keep the first
  timeline_.push_back(fmt::format("{} {}", util::local_time_now(), event));
}

void RecoveryLog::fault(util::Clock::time_point last_alive) {
  if (!fault_at_ || last_alive < *fault_at_) fault_at_ = last_alive;
}

void RecoveryLog::failure_noticed(util::Clock::time_point noticed) {
  failed_at_ = noticed;
  fault(noticed);
}

void RecoveryLog::replaced(int round, int max_restarts, const std::vector<std::string>& changes) {
  if (changes.empty()) return;
  replacement_line_ = fmt::format("round {}: {}; restart {}/{}", round, fmt::join(changes, "; "), round, max_restarts);
}

// The down time runs from the last sign of life of what failed (a lost
// node's last frame, a worker's exit) to ALL_RUNNING; of it, the time
// before the loss was noticed (--heartbeat-timeout for a node that went
// silent) is told apart.
std::optional<std::string> RecoveryLog::round_running(std::optional<util::Clock::time_point> all_running) {
  if (replacement_line_.empty()) return std::nullopt;
  std::string line = std::move(replacement_line_);
  replacement_line_.clear();
  if (all_running && fault_at_) {
    line += fmt::format("; the job was down {:.2f} s, from the last sign of life of what failed to every "
                        "worker running again",
                        seconds_between(*fault_at_, *all_running));
    if (failed_at_ && seconds_between(*fault_at_, *failed_at_) >= 0.01)
      line += fmt::format(" ({:.2f} s of it before the loss was noticed)", seconds_between(*fault_at_, *failed_at_));
  } else if (!all_running) {
    line += "; not every worker of the round started, so no down time is known";
  }
  fault_at_.reset();
  add(line);
  return line;
}

}  // namespace dlaunch::rendezvous
