// Durations as people write them on a command line ("30m", "2h", "90s")
// and as dlaunch says them back ("30 min", "1 h 30 min").
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace dlaunch::util {

// TEXT in seconds: a whole number with an optional unit, s, m, h or d
// ("1800", "30m", "2h", "1d"). Throws InputError naming SOURCE ("--bench-cooldown")
// when TEXT is not such a duration or lies outside [LOW, HIGH] seconds.
std::int64_t parse_duration_text(std::string_view text, std::string_view source, std::int64_t low,
                                 std::int64_t high);

// SECONDS in words: "45 s", "30 min", "2 h", "1 h 30 min" (seconds dropped past a minute).
std::string format_duration_text(std::int64_t seconds);

// DURATION in whole seconds, rounded down, for messages that say "N s".
inline long long whole_seconds(std::chrono::milliseconds duration) {
  return std::chrono::duration_cast<std::chrono::seconds>(duration).count();
}

}  // namespace dlaunch::util
