// Compares an attempt's root failure with the previous attempt's.
#include "doctor/repeat_guard.h"

#include <fmt/format.h>

namespace dlaunch::doctor {

namespace {

bool repeats(const AttemptFailure& previous, const AttemptFailure& now) {
  if (previous.attempt + 1 != now.attempt) return false;
  if (is_transient(now.diagnosis.kind) || now.diagnosis.consequence) return false;
  if (previous.diagnosis.signature != now.diagnosis.signature) return false;
  if (previous.step && now.step) return *now.step <= *previous.step;
  return now.seconds <= kNoProgressFactor * previous.seconds + 1.0;  // a second's slack for tiny jobs
}

// How far the two attempts got, in steps where both reported some.
std::string progress_of(const AttemptFailure& previous, const AttemptFailure& now) {
  if (previous.step && now.step) return fmt::format("step {}, then step {}", *previous.step, *now.step);
  std::string text = fmt::format("failed after {:.1f} s, then {:.1f} s", previous.seconds, now.seconds);
  return now.step ? text : text + ", before any step";
}

}  // namespace

std::optional<std::string> RepeatGuard::judge(const AttemptFailure& failure) {
  std::optional<AttemptFailure> previous = std::move(previous_);
  previous_ = failure;
  if (!previous || !repeats(*previous, failure)) return std::nullopt;
  return fmt::format(
      "not retrying: the same {} in attempts {} and {}, the second no further than the first ({}); "
      "--retry-repeated-failures restarts it anyway",
      short_name(failure.diagnosis), previous->attempt, failure.attempt, progress_of(*previous, failure));
}

std::optional<std::string> RepeatGuard::judge(const std::optional<rendezvous::Failure>& root, int attempt,
                                              double seconds, std::optional<std::int64_t> step) {
  if (!root) {
    forget();
    return std::nullopt;
  }
  return judge(AttemptFailure{attempt, diagnose(*root), seconds, step});
}

}  // namespace dlaunch::doctor
