// How far each worker of a node has come, for --hang-timeout and
// --straggler-lag.
//
// A worker makes progress when it writes output, or, once it has used the
// progress channel (DLAUNCH_PROGRESS_FD: lines of step numbers), only when
// its step changes: a rank that prints from a side thread while its
// training loop is stuck is then still caught. Pure: times come in, so it
// is unit-tested without processes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rendezvous/coordinator.h"
#include "util/socket.h"
#include "wire/progress.h"

namespace dlaunch::launch {

// The environment variable that names the progress channel's descriptor.
inline constexpr const char* kProgressFdVariable = "DLAUNCH_PROGRESS_FD";

class ProgressTracker : public rendezvous::ProgressSource {
 public:
  // RANKS: the global rank of each worker, by index. START: the round's start.
  ProgressTracker(std::vector<int> ranks, util::Clock::time_point start);

  // Worker INDEX wrote output at NOW.
  void on_output(std::size_t index, util::Clock::time_point now);
  // Worker INDEX wrote BYTES to its progress channel at NOW: whole lines
  // that hold a whole number (a step) count; anything else is ignored, and
  // a line longer than kLongestLine is dropped.
  void on_progress_bytes(std::size_t index, std::string_view bytes, util::Clock::time_point now);

  // The latest progress of any worker of this node.
  util::Clock::time_point last_progress() const override;
  // The step of every worker that has reported one.
  std::vector<rendezvous::RankStep> steps() const override;

  static constexpr std::size_t kLongestLine = 32;

 private:
  struct Worker {
    int rank = 0;
    util::Clock::time_point last_output;
    util::Clock::time_point last_step_change;
    std::optional<std::int64_t> step;
    std::string partial;   // a line whose end has not come yet
    bool overlong = false;  // the partial line passed kLongestLine: dropped to its end
  };
  void take_line(Worker& worker, std::string_view line, util::Clock::time_point now);

  std::vector<Worker> workers_;
};

}  // namespace dlaunch::launch
