#include "check/check_options.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "util/command_line.h"
#include "util/error.h"

namespace dlaunch::check {

std::optional<CheckOptions> parse_check_options(const std::vector<std::string>& args) {
  CheckOptions options;
  CLI::App app("Prove the fabric: an all-reduce check of every rank (default), an all-reduce "
               "bandwidth sweep (--bench) or a node-to-node bandwidth matrix (--pairs). Run it "
               "as the worker program of a launcher: dlaunch run --nproc-per-node 4 -- dlaunch check",
               "dlaunch check");
  app.set_help_flag("-h,--help", "Show this help and exit");
  app.add_flag("--bench", options.bench, "All-reduce sweep over message sizes, as nccl-tests");
  app.add_flag("--pairs", options.pairs, "Point-to-point bandwidth between every pair of nodes");
  app.add_flag("--json", options.json, "Print the --bench or --pairs results as JSON");
  app.add_option("--min-bytes", options.min_bytes, "Smallest --bench message (default 8)");
  app.add_option("--max-bytes", options.max_bytes, "Largest --bench message (default 256 MiB)");
  app.add_option("--iters", options.iters, "Timed iterations per size (default 20)")
      ->check(CLI::Range(1, 100000));
  app.add_option("--warmup", options.warmup, "Untimed iterations per size (default 5)")
      ->check(CLI::Range(0, 100000));
  app.add_option("--pair-bytes", options.pair_bytes, "--pairs message size (default 64 MiB)");
  int timeout_seconds = 120;
  app.add_option("--timeout", timeout_seconds,
                 "Seconds to wait for a rank or an operation before failing (default 120)")
      ->check(CLI::Range(1, 86400));
  int inject = -1;
  app.add_option("--inject-wrong-rank", inject)->group("");  // hidden: for tests only
  if (!parse_command_line(app, args, "dlaunch check")) return std::nullopt;
  if (options.min_bytes < 4 || options.max_bytes < options.min_bytes)
    throw UsageError(fmt::format("--min-bytes must be at least 4 and at most --max-bytes, got {} and {}",
                                 options.min_bytes, options.max_bytes));
  if (options.pair_bytes < 1) throw UsageError("--pair-bytes must be at least 1");
  options.timeout = std::chrono::seconds(timeout_seconds);
  if (inject >= 0) options.inject_wrong_rank = inject;
  return options;
}

}  // namespace dlaunch::check
