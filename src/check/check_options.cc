#include "check/check_options.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "util/command_line.h"
#include "util/error.h"
#include "util/strings.h"

namespace dlaunch::check {
namespace {

// Beyond any one host's memory, and far enough below 2^64 that the sweep's
// doubling up to --max-bytes cannot overflow.
constexpr std::int64_t kMaxBytes = std::int64_t{1} << 40;

// A byte count as typed. CLI11 reads "-1" into an unsigned integer as
// 2^64-1, so the options take text and are read here, where a negative,
// malformed or huge value is refused naming the option and the value.
std::uint64_t byte_count(const std::string& text, std::int64_t low, const char* option) {
  return static_cast<std::uint64_t>(
      util::parse_int_in_range(text, low, kMaxBytes, fmt::format("{} (bytes)", option)));
}

}  // namespace

std::optional<CheckOptions> parse_check_options(const std::vector<std::string>& args) {
  CheckOptions options;
  std::string min_bytes = std::to_string(options.min_bytes);
  std::string max_bytes = std::to_string(options.max_bytes);
  std::string pair_bytes = std::to_string(options.pair_bytes);
  CLI::App app("Prove the fabric: an all-reduce check of every rank (default), an all-reduce "
               "bandwidth sweep (--bench) or a node-to-node bandwidth matrix (--pairs). Run it "
               "as the worker program of a launcher: dlaunch run --nproc-per-node 4 -- dlaunch check",
               "dlaunch check");
  app.set_help_flag("-h,--help", "Show this help and exit");
  app.add_flag("--bench", options.bench, "All-reduce sweep over message sizes, as nccl-tests");
  app.add_flag("--pairs", options.pairs, "Point-to-point bandwidth between every pair of nodes");
  app.add_flag("--json", options.json, "Print the --bench or --pairs results as JSON");
  app.add_option("--min-bytes", min_bytes, "Smallest --bench message (default 8)");
  app.add_option("--max-bytes", max_bytes, "Largest --bench message (default 256 MiB)");
  app.add_option("--iters", options.iters, "Timed iterations per size (default 20)")
      ->check(CLI::Range(1, 100000));
  app.add_option("--warmup", options.warmup, "Untimed iterations per size (default 5)")
      ->check(CLI::Range(0, 100000));
  app.add_option("--pair-bytes", pair_bytes, "--pairs message size (default 64 MiB)");
  int timeout_seconds = 120;
  app.add_option("--timeout", timeout_seconds,
                 "Seconds to wait for a rank or an operation before failing (default 120)")
      ->check(CLI::Range(1, 86400));
  int inject = -1;
  app.add_option("--inject-wrong-rank", inject)->group("");  // hidden: for tests only
  if (!util::parse_command_line(app, args, "dlaunch check")) return std::nullopt;
  options.min_bytes = byte_count(min_bytes, 4, "--min-bytes");
  options.max_bytes = byte_count(max_bytes, 4, "--max-bytes");
  options.pair_bytes = byte_count(pair_bytes, 1, "--pair-bytes");
  if (options.max_bytes < options.min_bytes)
    throw util::UsageError(fmt::format("--min-bytes must be at most --max-bytes, got {} and {}",
                                 options.min_bytes, options.max_bytes));
  options.timeout = std::chrono::seconds(timeout_seconds);
  if (inject >= 0) options.inject_wrong_rank = inject;
  return options;
}

}  // namespace dlaunch::check
