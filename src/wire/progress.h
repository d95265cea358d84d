// How far a node's workers have come: what each launcher tells node 0
// while its workers run, for --hang-timeout and --straggler-lag.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

namespace dlaunch::rendezvous {

// The steps a worker may report: 0 to a trillion, far beyond any run.
// Anything else (a negative step, 9e18) is no step: bounded, a median of
// steps and "N steps behind" can neither overflow nor mislead.
inline constexpr std::int64_t kMostSteps = 1'000'000'000'000;

inline bool is_step(std::int64_t step) { return step >= 0 && step <= kMostSteps; }

// A worker's last step from its progress channel (DLAUNCH_PROGRESS_FD).
struct RankStep {
  int rank = 0;
  std::int64_t step = 0;
  bool operator==(const RankStep&) const = default;
};

// The highest of STEPS; nullopt when there is none.
inline std::optional<std::int64_t> highest_step(const std::vector<RankStep>& steps) {
  std::optional<std::int64_t> top;
  for (const RankStep& step : steps) top = std::max(top.value_or(step.step), step.step);
  return top;
}

struct ProgressMessage {
  std::uint32_t round = 0;
  // Milliseconds since any worker of the node made progress (output, or a
  // new step), as the node's own clock measured it: no clocks are compared.
  std::uint32_t idle_ms = 0;
  std::vector<RankStep> steps;  // at most one per worker of the node
};

}  // namespace dlaunch::rendezvous
