#include "check/check_options.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "util/command_line.h"
#include "util/command_line_spec.h"
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

namespace {

// The command line as CLI11 fills it: byte counts as text, read afterwards.
struct CheckParser {
  CLI::App app{"Prove the fabric: an all-reduce check of every rank (default), an all-reduce "
               "bandwidth sweep (--bench), a node-to-node bandwidth matrix (--pairs) or the "
               "launcher's pre-start gate (--gate). Run it as the worker program of a launcher.",
               "dlaunch check"};
  CheckOptions options;
  std::string min_bytes = std::to_string(options.min_bytes);
  std::string max_bytes = std::to_string(options.max_bytes);
  std::string pair_bytes = std::to_string(options.pair_bytes);
  int timeout_seconds = 120;
  int inject = -1;
};

void configure(CheckParser& parser) {
  CLI::App& app = parser.app;
  CheckOptions& options = parser.options;
  util::set_usage(app, "dlaunch run [run options] -- dlaunch check [options]");
  app.add_flag("--bench", options.bench, "All-reduce sweep over message sizes, as nccl-tests")->group("Mode");
  app.add_flag("--pairs", options.pairs, "Point-to-point bandwidth between every pair of nodes")->group("Mode");
  app.add_flag("--gate", options.gate,
               "The pre-start gate, one rank per node: a verified all-reduce, then every node pair's "
               "bandwidth; prints one JSON line per rank (the launcher starts it)")
      ->group("Mode");
  app.add_option("--min-bytes", parser.min_bytes, "Smallest --bench message (default 8)")
      ->group("Sizes")
      ->type_name("BYTES");
  app.add_option("--max-bytes", parser.max_bytes, "Largest --bench message (default 256 MiB)")
      ->group("Sizes")
      ->type_name("BYTES");
  app.add_option("--pair-bytes", parser.pair_bytes,
                 "--pairs message size (default 64 MiB), or --gate's (default 4 MiB)")
      ->group("Sizes")
      ->type_name("BYTES");
  app.add_option("--iters", options.iters, "Timed iterations per size (default 20)")
      ->group("Timing")
      ->type_name("N")
      ->check(CLI::Range(1, 100000));
  app.add_option("--warmup", options.warmup, "Untimed iterations per size (default 5)")
      ->group("Timing")
      ->type_name("N")
      ->check(CLI::Range(0, 100000));
  app.add_option("--timeout", parser.timeout_seconds,
                 "Seconds to wait for a rank or an operation before failing (default 120)")
      ->group("Timing")
      ->type_name("SECONDS")
      ->check(CLI::Range(1, 86400));
  app.add_flag("--json", options.json, "Print the --bench or --pairs results as JSON")->group("Output");
  app.add_option("--inject-wrong-rank", parser.inject)->group("");  // hidden: for tests only
  util::finish_help(app, {
                             {"dlaunch run --nproc-per-node 4 -- dlaunch check",
                              "every rank of this machine talks to every other?"},
                             {"dlaunch submit --nodes 2 --wait -- dlaunch check",
                              "the same across two Slurm nodes"},
                             {"dlaunch run --nproc-per-node 4 -- dlaunch check --bench --max-bytes 1048576",
                              "all-reduce bandwidth up to 1 MiB messages, nccl-tests style"},
                             {"dlaunch submit --srun --nodes 16 -- dlaunch check --pairs --json",
                              "node-to-node bandwidth as JSON: find the one slow node of sixteen"},
                         });
}

}  // namespace

std::optional<CheckOptions> parse_check_options(const std::vector<std::string>& args) {
  CheckParser parser;
  configure(parser);
  if (!util::parse_command_line(parser.app, args, "dlaunch check")) return std::nullopt;
  CheckOptions options = parser.options;
  options.min_bytes = byte_count(parser.min_bytes, 4, "--min-bytes");
  options.max_bytes = byte_count(parser.max_bytes, 4, "--max-bytes");
  options.pair_bytes = byte_count(parser.pair_bytes, 1, "--pair-bytes");
  if (options.gate && parser.app.count("--pair-bytes") == 0) options.pair_bytes = kGatePairBytes;
  if (options.gate && (options.bench || options.pairs))
    throw util::UsageError("--gate cannot be combined with --bench or --pairs: it runs its own checks");
  if (options.max_bytes < options.min_bytes)
    throw util::UsageError(fmt::format("--min-bytes must be at most --max-bytes, got {} and {}",
                                 options.min_bytes, options.max_bytes));
  options.timeout = std::chrono::seconds(parser.timeout_seconds);
  if (parser.inject >= 0) options.inject_wrong_rank = parser.inject;
  return options;
}

util::CommandLineSpec describe_check_options() { return util::describe_parser(configure); }

}  // namespace dlaunch::check
