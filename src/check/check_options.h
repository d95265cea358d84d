// The options of `dlaunch check`.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "util/command_line_spec.h"

namespace dlaunch::check {

// --pair-bytes when --gate runs without it: short, so that a gate over
// many nodes takes seconds, yet long enough to tell a slow link.
constexpr std::uint64_t kGatePairBytes = 4ull << 20;

struct CheckOptions {
  bool bench = false;
  bool pairs = false;
  bool gate = false;  // the pre-start gate: one rank per node, one JSON line each
  bool json = false;
  std::uint64_t min_bytes = 8;
  std::uint64_t max_bytes = 256ull << 20;
  int iters = 20;
  int warmup = 5;
  std::uint64_t pair_bytes = 64ull << 20;  // 4 MiB with --gate unless given
  std::chrono::milliseconds timeout{120'000};
  std::optional<int> inject_wrong_rank;  // tests only: this rank contributes a wrong value
};

// Parses ARGS (after "dlaunch check"); nullopt when --help was printed.
// Throws UsageError naming a bad option or value, InputError naming a byte
// count that is malformed, negative or beyond 1 TiB, with the value as typed.
std::optional<CheckOptions> parse_check_options(const std::vector<std::string>& args);

// The options of `dlaunch check`, for `dlaunch completion`. (dlaunch
// itself links this file, not the rest of the check: no gloo.)
util::CommandLineSpec describe_check_options();

}  // namespace dlaunch::check
