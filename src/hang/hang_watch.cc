#include "hang/hang_watch.h"

#include <algorithm>
#include <fmt/format.h>

#include "util/local_time.h"
#include "util/exit_codes.h"

namespace dlaunch::rendezvous {

HangWatch::HangWatch(HangSettings settings, int nodes, util::Clock::time_point start)
    : settings_(settings), start_(start) {
  for (int node = 0; node < nodes; ++node) nodes_[node] = Node{"", start, {}};
}

void HangWatch::update(int node_rank, const std::string& host, util::Clock::time_point last_progress,
                       std::vector<RankStep> steps) {
  auto found = nodes_.find(node_rank);
  if (found == nodes_.end()) return;
  found->second.host = host;
  // A report that arrives late never moves a node back in time.
  found->second.last_progress = std::max(found->second.last_progress, last_progress);
  if (!steps.empty()) first_step_seen_ = true;
  found->second.steps = std::move(steps);
}

util::Clock::time_point HangWatch::latest_progress() const {
  util::Clock::time_point latest{};
  for (const auto& [rank, node] : nodes_) latest = std::max(latest, node.last_progress);
  return latest;
}

bool HangWatch::starting() const { return !first_step_seen_ && settings_.startup_timeout.count() > 0; }

std::optional<util::Clock::time_point> HangWatch::due() const {
  if (declared_ || settings_.hang_timeout.count() <= 0 || nodes_.empty()) return std::nullopt;
  auto due = latest_progress() + settings_.hang_timeout;
  if (starting()) due = std::max(due, start_ + settings_.startup_timeout);
  return due;
}

bool HangWatch::hung(util::Clock::time_point now) const {
  auto when = due();
  return when && now >= *when;
}

std::string HangWatch::declare(util::Clock::time_point now) {
  declared_ = true;
  auto seconds_of = [](auto duration) { return std::chrono::duration_cast<std::chrono::seconds>(duration).count(); };
  auto idle = seconds_of(now - latest_progress());
  if (starting())
    return fmt::format("no rank reported a first step within {} s of the start (--startup-timeout {}), and "
                       "none made progress for {} s (--hang-timeout {})",
                       seconds_of(now - start_), seconds_of(settings_.startup_timeout), idle,
                       seconds_of(settings_.hang_timeout));
  return fmt::format("no progress for {} s on any rank (--hang-timeout {})", idle, seconds_of(settings_.hang_timeout));
}

std::optional<std::string> HangWatch::straggler_news() {
  if (settings_.straggler_lag <= 0) return std::nullopt;
  struct Entry {
    RankStep step;
    const std::string* host;
  };
  std::vector<Entry> entries;
  for (const auto& [rank, node] : nodes_) {
    for (const auto& step : node.steps) entries.push_back({step, &node.host});
  }
  if (entries.size() < 2) return std::nullopt;
  std::vector<std::int64_t> values;
  for (const auto& entry : entries) values.push_back(entry.step.step);
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2), values.end());
  std::int64_t median = values[values.size() / 2];
  std::vector<int> stragglers;
  std::vector<std::string> named;
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.step.rank < b.step.rank; });
  for (const auto& entry : entries) {
    std::int64_t behind = median - entry.step.step;
    if (behind <= settings_.straggler_lag) continue;
    stragglers.push_back(entry.step.rank);
    named.push_back(fmt::format("rank {} on {} at step {}, {} behind", entry.step.rank, *entry.host,
                                entry.step.step, behind));
  }
  if (stragglers == last_stragglers_) return std::nullopt;
  last_stragglers_ = stragglers;
  if (stragglers.empty()) return fmt::format("no stragglers now (median step {})", median);
  constexpr std::size_t kNamed = 8;
  std::string list;
  for (std::size_t i = 0; i < named.size() && i < kNamed; ++i) list += (i ? "; " : "") + named[i];
  if (named.size() > kNamed) list += fmt::format("; and {} more", named.size() - kNamed);
  return fmt::format("straggler{} (more than {} steps behind the median step {}): {}",
                     stragglers.size() == 1 ? "" : "s", settings_.straggler_lag, median, list);
}

Failure hang_failure(const std::string& headline, const std::string& summary,
                     const std::string& report_path) {
  Failure failure;
  failure.exit_code = util::kExitHang;
  failure.time = util::local_time_now();
  failure.description = fmt::format("hang: {}; {}", headline, summary);
  if (!report_path.empty()) failure.description += fmt::format(" (stacks in {})", report_path);
  return failure;
}

}  // namespace dlaunch::rendezvous
