#include "util/shell_words.h"

#include <cctype>
#include <string_view>

namespace dlaunch::util {
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

bool equals_ignoring_case(std::string_view word, std::string_view lower) {
  if (word.size() != lower.size()) return false;
  for (std::size_t i = 0; i < word.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(word[i])) != lower[i]) return false;
  }
  return true;
}

// Whether sbatch would read WORD, written bare, as anything but itself.
// Bytes outside printable ASCII are quoted too: sbatch asks isspace(), whose
// answer for them depends on the locale.
bool needs_sbatch_quotes(const std::string& word) {
  if (word.empty() || word.front() == ':') return true;
  if (equals_ignoring_case(word, "hetjob") || equals_ignoring_case(word, "packjob")) return true;
  for (char c : word) {
    auto byte = static_cast<unsigned char>(c);
    if (byte <= ' ' || byte >= 0x7f) return true;
    if (std::string_view("'\"\\#").find(c) != std::string_view::npos) return true;
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

std::string sbatch_quote(const std::string& word) {
  if (!needs_sbatch_quotes(word)) return word;
  // Inside quotes sbatch still reads '\' as an escape, a shell does not:
  // outside them both read \' and \\ alike.
  std::string quoted = "'";
  for (char c : word) {
    if (c == '\'') quoted += "'\\''";
    else if (c == '\\') quoted += "'\\\\'";
    else quoted += c;
  }
  return quoted + "'";
}

}  // namespace dlaunch::util
