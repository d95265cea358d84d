#include "check/correctness_check.h"

#include <chrono>
#include <cstdlib>
#include <fmt/format.h>

#include "check/group_layout.h"
#include "util/strings.h"

namespace dlaunch::check {
namespace {

constexpr std::int64_t kBroadcastSeed = 0x5eed;

struct RankResult {
  bool allreduce_ok = false;
  bool broadcast_ok = false;
  std::int64_t got = 0;
  std::int64_t expected = 0;
  std::int64_t broadcast_got = 0;
};

RankResult exchange(collective::Communicator& communicator, const CheckOptions& options) {
  RankResult result;
  const std::int64_t n = communicator.size();
  std::int64_t value = communicator.rank();
  if (options.inject_wrong_rank && *options.inject_wrong_rank == communicator.rank()) value += 1000;
  communicator.allreduce_sum(&value, 1);
  result.got = value;
  result.expected = n * (n - 1) / 2;
  result.allreduce_ok = result.got == result.expected;

  std::int64_t broadcast = communicator.rank() == 0 ? kBroadcastSeed + n : -1;
  communicator.broadcast(&broadcast, 1, 0);
  result.broadcast_got = broadcast;
  result.broadcast_ok = broadcast == kBroadcastSeed + n;
  communicator.barrier();
  return result;
}

}  // namespace

bool terminal_is_utf8() {
  for (const char* name : {"LC_ALL", "LC_CTYPE", "LANG"}) {
    const char* value = std::getenv(name);
    if (value != nullptr && *value != '\0') {
      std::string upper = util::to_upper(value);
      return upper.find("UTF-8") != std::string::npos || upper.find("UTF8") != std::string::npos;
    }
  }
  return false;
}

int run_correctness_check(collective::Communicator& communicator,
                          const collective::WorkerIdentity& identity, const CheckOptions& options) {
  auto start = std::chrono::steady_clock::now();
  RankResult result = exchange(communicator, options);
  const bool passed = result.allreduce_ok && result.broadcast_ok;
  const bool utf8 = terminal_is_utf8();
  std::string mark = passed ? (utf8 ? "✓" : "OK") : (utf8 ? "✗" : "FAIL");
  std::string detail =
      passed ? fmt::format("all-reduce sum {} == {}, broadcast ok, barrier ok", result.got, result.expected)
             : fmt::format("all-reduce sum {} (expected {}), broadcast {} (expected {})", result.got,
                           result.expected, result.broadcast_got,
                           kBroadcastSeed + communicator.size());
  fmt::print("rank {:>3} local {:>2} on {}: {} {}\n", identity.rank, identity.local_rank, identity.host,
             mark, detail);
  std::fflush(stdout);

  // Rank 0 needs the others' verdicts and hosts for its summary.
  std::int64_t failures = passed ? 0 : 1;
  communicator.allreduce_sum(&failures, 1);
  GroupLayout layout = gather_layout(communicator, identity.host);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (communicator.rank() == 0) {
    const int n = communicator.size();
    std::string verdict = failures == 0 ? (utf8 ? "✓ PASSED" : "PASSED") : (utf8 ? "✗ FAILED" : "FAILED");
    fmt::print("# dlaunch check: {}\n", verdict);
    fmt::print("#   world size {}, {} node(s), ranks per node: {}\n", n, layout.hosts.size(),
               describe_ranks_per_host(layout));
    fmt::print("#   passed {}/{}, failed {}, time {:.3f} s\n", n - failures, n, failures, seconds);
    std::fflush(stdout);
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace dlaunch::check
