#include "util/shell_words.h"

#include <cctype>
#include <string_view>

namespace dlaunch {
namespace {

bool needs_quotes(const std::string& word) {
  if (word.empty()) return true;
  for (char c : word) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) ||
          std::string_view("-_./=:,+@%").find(c) != std::string_view::npos))
      return true;
  }
  return false;
}

}  // namespace

std::string shell_quote(const std::string& word) {
  if (!needs_quotes(word)) return word;
  std::string quoted = "'";
  for (char c : word) quoted += (c == '\'') ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string shell_join(const std::vector<std::string>& words) {
  std::string line;
  for (const auto& word : words) {
    if (!line.empty()) line += ' ';
    line += shell_quote(word);
  }
  return line;
}

}  // namespace dlaunch
