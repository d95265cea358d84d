// Small string helpers shared by the parsers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dlaunch::util {

std::vector<std::string> split(std::string_view text, char separator);
std::string_view trim(std::string_view text);
bool starts_with(std::string_view text, std::string_view prefix);
std::string to_upper(std::string_view text);
std::string join(const std::vector<std::string>& parts, std::string_view separator);
// TEXT with control characters written as escapes (\n, \r, \t, \x1b), so
// a message shows where they are and cannot itself break a line or drive
// the terminal: for text from outside (a peer, a file, a flag's value).
std::string escaped(std::string_view text);

// Parses a whole decimal integer; nullopt on anything else (sign, spaces,
// trailing text, overflow). Callers turn nullopt into an InputError that
// names the input, since only they know what the number was for.
std::optional<std::int64_t> parse_int(std::string_view text);

// parse_int, or an InputError "WHAT must be an integer between LO and HI, got 'TEXT'".
std::int64_t parse_int_in_range(std::string_view text, std::int64_t low, std::int64_t high,
                                std::string_view what);

// Levenshtein distance, for "did you mean" suggestions.
std::size_t edit_distance(std::string_view a, std::string_view b);
// The candidate closest to WORD when it is close enough to be a likely typo.
std::optional<std::string> closest_match(std::string_view word,
                                         const std::vector<std::string>& candidates);

}  // namespace dlaunch::util
