// sbatch's forms of --time and --mem (slurm/request_values.h).
#include "slurm/request_values.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include "util/strings.h"

namespace dlaunch::slurm {
namespace {

bool all_digits(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) != 0;
  });
}

// Whether TEXT is one to COUNT whole numbers separated by ':'.
bool colon_numbers(std::string_view text, std::size_t count) {
  std::vector<std::string> parts = util::split(text, ':');
  return parts.size() <= count && std::all_of(parts.begin(), parts.end(), [](const std::string& part) {
    return all_digits(part);
  });
}

bool same_ignoring_case(std::string_view text, std::string_view word) {
  return text.size() == word.size() && std::equal(text.begin(), text.end(), word.begin(), [](char a, char b) {
    return std::toupper(static_cast<unsigned char>(a)) == b;
  });
}

}  // namespace

std::optional<std::string> time_limit_problem(std::string_view time) {
  if (same_ignoring_case(time, "UNLIMITED") || same_ignoring_case(time, "INFINITE")) return std::nullopt;
  const std::size_t dash = time.find('-');
  const bool valid = dash == std::string_view::npos
                         ? colon_numbers(time, 3)
                         : all_digits(time.substr(0, dash)) && colon_numbers(time.substr(dash + 1), 3);
  if (valid) return std::nullopt;
  return std::string(
      "is no Slurm time limit: give minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS, e.g. 1-00:00:00 (a "
      "day), 2:00:00 (two hours) or 30 (minutes)");
}

std::optional<std::string> memory_size_problem(std::string_view size) {
  std::string_view number = size;
  if (!number.empty() && std::string_view("KMGTkmgt").find(number.back()) != std::string_view::npos)
    number.remove_suffix(1);
  if (all_digits(number)) return std::nullopt;
  return std::string(
      "is no Slurm memory size: give a whole number with an optional unit K, M, G or T (megabytes without "
      "one), e.g. 64G or 500M");
}

}  // namespace dlaunch::slurm
