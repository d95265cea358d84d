#include "util/duration_text.h"

#include <fmt/format.h>

#include "util/error.h"
#include "util/strings.h"

namespace dlaunch::util {

std::int64_t parse_duration_text(std::string_view text, std::string_view source, std::int64_t low,
                                 std::int64_t high) {
  auto bad = [&](const std::string& why) {
    return InputError(fmt::format("{} takes a duration such as 90s, 30m, 2h or 1d, got '{}': {}", source,
                                  escaped(text), why));
  };
  std::int64_t unit = 1;
  std::string_view number = text;
  if (!text.empty()) {
    switch (text.back()) {
      case 's': unit = 1; break;
      case 'm': unit = 60; break;
      case 'h': unit = 3600; break;
      case 'd': unit = 86400; break;
      default: unit = 0; break;
    }
    if (unit != 0) number.remove_suffix(1);
    else unit = 1;
  }
  // parse_int takes a sign; a duration has none.
  auto value = number.empty() || number.front() == '-' || number.front() == '+' ? std::nullopt : parse_int(number);
  if (!value) throw bad("not a whole number with an optional unit s, m, h or d");
  // Compared before multiplying, so a huge count cannot overflow.
  if (*value > high / unit || *value * unit < low)
    throw bad(fmt::format("it must lie between {} and {}", format_duration_text(low), format_duration_text(high)));
  return *value * unit;
}

std::string format_duration_text(std::int64_t seconds) {
  if (seconds < 60) return fmt::format("{} s", seconds);
  const std::int64_t hours = seconds / 3600;
  const std::int64_t minutes = seconds % 3600 / 60;
  if (hours == 0) return fmt::format("{} min", minutes);
  if (minutes == 0) return fmt::format("{} h", hours);
  return fmt::format("{} h {} min", hours, minutes);
}

}  // namespace dlaunch::util
