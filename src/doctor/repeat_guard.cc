// Compares an attempt's root failure with the previous attempt's.
#include "doctor/repeat_guard.h"

#include <fmt/format.h>

namespace dlaunch::doctor {

namespace {

bool repeats(const AttemptFailure& previous, const AttemptFailure& now) {
  if (previous.attempt + 1 != now.attempt) return false;
  if (is_transient(now.diagnosis.kind) || now.diagnosis.consequence) return false;
  if (previous.diagnosis.signature != now.diagnosis.signature) return false;
  return now.seconds <= kNoProgressFactor * previous.seconds + 1.0;  // a second's slack for tiny jobs
}

}  // namespace

std::optional<std::string> RepeatGuard::judge(const AttemptFailure& failure) {
  std::optional<AttemptFailure> previous = std::move(previous_);
  previous_ = failure;
  if (!previous || !repeats(*previous, failure)) return std::nullopt;
  return fmt::format(
      "not retrying: the same {} in attempts {} and {}, the second no further than the first "
      "(failed after {:.1f} s, then {:.1f} s); --retry-repeated-failures restarts it anyway",
      short_name(failure.diagnosis), previous->attempt, failure.attempt, previous->seconds, failure.seconds);
}

std::optional<std::string> RepeatGuard::judge(const std::optional<rendezvous::Failure>& root, int attempt,
                                              double seconds) {
  if (!root) {
    forget();
    return std::nullopt;
  }
  return judge(AttemptFailure{attempt, diagnose(*root), seconds});
}

}  // namespace dlaunch::doctor
