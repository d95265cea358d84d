#include "launch/progress_tracker.h"

#include <algorithm>
#include <charconv>

namespace dlaunch::launch {

ProgressTracker::ProgressTracker(std::vector<int> ranks, util::Clock::time_point start) {
  for (int rank : ranks) {
    Worker worker;
    worker.rank = rank;
    worker.last_output = start;
    worker.last_step_change = start;
    workers_.push_back(std::move(worker));
  }
}

void ProgressTracker::on_output(std::size_t index, util::Clock::time_point now) {
  if (index < workers_.size()) workers_[index].last_output = now;
}

void ProgressTracker::on_progress_bytes(std::size_t index, std::string_view bytes, util::Clock::time_point now) {
  if (index >= workers_.size()) return;
  Worker& worker = workers_[index];
  while (!bytes.empty()) {
    std::size_t end = bytes.find('\n');
    std::string_view piece = bytes.substr(0, end);
    if (!worker.overlong) {
      if (worker.partial.size() + piece.size() > kLongestLine) worker.overlong = true;
      else worker.partial.append(piece);
    }
    if (end == std::string_view::npos) return;
    if (!worker.overlong) take_line(worker, worker.partial, now);
    worker.partial.clear();
    worker.overlong = false;
    bytes.remove_prefix(end + 1);
  }
}

void ProgressTracker::take_line(Worker& worker, std::string_view line, util::Clock::time_point now) {
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
  while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
  std::int64_t step = 0;
  auto [end, error] = std::from_chars(line.data(), line.data() + line.size(), step);
  if (error != std::errc() || end != line.data() + line.size() || line.empty()) return;
  if (!rendezvous::is_step(step)) return;
  if (worker.step != step) worker.last_step_change = now;
  worker.step = step;
}

util::Clock::time_point ProgressTracker::last_progress() const {
  util::Clock::time_point latest{};
  for (const auto& worker : workers_)
    latest = std::max(latest, worker.step ? worker.last_step_change : worker.last_output);
  return latest;
}

std::vector<rendezvous::RankStep> ProgressTracker::steps() const {
  std::vector<rendezvous::RankStep> steps;
  for (const auto& worker : workers_) {
    if (worker.step) steps.push_back({worker.rank, *worker.step});
  }
  return steps;
}

}  // namespace dlaunch::launch
