#include "process/stall_watch.h"

#include <algorithm>

namespace dlaunch::process {

StallWatch::StallWatch(std::chrono::milliseconds threshold, Clock::time_point now)
    : threshold_(threshold), last_look_(now), resumed_(now) {}

std::optional<std::chrono::milliseconds> StallWatch::look(Clock::time_point now) {
  auto gap = std::chrono::duration_cast<std::chrono::milliseconds>(now - last_look_);
  last_look_ = std::max(last_look_, now);
  if (gap < threshold_) return std::nullopt;
  last_ = Stall{now, gap};
  resumed_ = now;
  return gap;
}

std::optional<StallWatch::Stall> StallWatch::recent(Clock::time_point now, std::chrono::milliseconds window) const {
  if (!last_ || now - last_->ended > window) return std::nullopt;
  return last_;
}

std::chrono::milliseconds stall_threshold(std::chrono::milliseconds heartbeat_timeout) {
  return std::max(std::chrono::milliseconds(1000), heartbeat_timeout / 2);
}

}  // namespace dlaunch::process
