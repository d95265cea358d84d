#include "launch/report_duty.h"

#include <fmt/format.h>

namespace dlaunch::launch {
namespace {

// The same failure, as this node saw it and as the verdict carries it
// (node 0 may hold the copy announced before the last lines were read).
bool same_failure(const rendezvous::Failure& a, const rendezvous::Failure& b) {
  return a.node_rank == b.node_rank && a.global_rank == b.global_rank && a.pid == b.pid &&
         a.description == b.description;
}

}  // namespace

bool speaks_for_job(int launchers, std::optional<int> node_rank, const rendezvous::Verdict& verdict) {
  return launchers == 1 || node_rank == 0 || verdict.decided_here;
}

bool says_notices(int launchers, std::optional<int> node_rank) { return launchers == 1 || node_rank == 0; }

std::optional<std::string> own_failure_line(const rendezvous::Verdict& verdict,
                                            const rendezvous::NodeOutcome& own, int node_rank) {
  if (!own.failure) return std::nullopt;
  if (verdict.failure && same_failure(*own.failure, *verdict.failure)) return std::nullopt;
  // A launcher told to stop is no news: every launcher of a cancelled job is.
  if (own.stop_signal != 0 && own.failure->global_rank < 0) return std::nullopt;
  return fmt::format("dlaunch: node {} also saw a failure: {}{}", node_rank,
                     rendezvous::describe_failure(*own.failure),
                     verdict.failure ? " (node 0's summary names the job's first failure)" : "");
}

}  // namespace dlaunch::launch
