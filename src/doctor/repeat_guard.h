// The restart rule that does not spend the budget on a bug: a failure
// whose signature repeats in two consecutive attempts, the second getting
// no further than the first, is deterministic, and another attempt would
// only fail the same way.
//
// "No further" is the highest step any rank reported on
// DLAUNCH_PROGRESS_FD, no higher than the previous attempt's, when both
// attempts reported steps; else the time from an attempt's start to its
// failure, within kNoProgressFactor of the previous attempt's: a job that
// trained for an hour before an NCCL error did make progress, and is
// restarted. Kinds that
// are transient (a lost node, a hang) are always restarted. Pure: the
// coordinator that decides a round (node 0's service, a lone launcher)
// feeds it each attempt's root failure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "doctor/diagnosis.h"

namespace dlaunch::doctor {

// Attempts that fail this much later than the one before made progress.
inline constexpr double kNoProgressFactor = 1.5;

// One attempt's root failure as the rule weighs it.
struct AttemptFailure {
  int attempt = 0;
  Diagnosis diagnosis;
  double seconds = 0;  // from the attempt's start to its failure
  std::optional<std::int64_t> step;  // the highest step any rank reported; none: no step
};

class RepeatGuard {
 public:
  // Records FAILURE; returns why the job must not be restarted ("not
  // retrying: the same ValueError at train.py:12 in attempts 0 and 1, ...")
  // when it repeats the previous attempt's, else nullopt.
  std::optional<std::string> judge(const AttemptFailure& failure);

  // The same for an attempt's ROOT failure as a coordinator has it (none:
  // the attempt ended without one, and the next is no repeat), diagnosed
  // here; SECONDS from the attempt's start.
  std::optional<std::string> judge(const std::optional<rendezvous::Failure>& root, int attempt, double seconds,
                                   std::optional<std::int64_t> step = std::nullopt);

  // An attempt that ended without a failure of its own (a stop, success):
  // the next failure is not a repeat.
  void forget() { previous_.reset(); }

 private:
  std::optional<AttemptFailure> previous_;
};

}  // namespace dlaunch::doctor
