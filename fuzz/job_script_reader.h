// Reads a job script back the way sbatch and bash will, so that tests can
// check what a script means rather than how it is spelled. Used by
// fuzz/job_script_fuzz.cc and tests/unit/job_script_test.cc; header-only so
// that both builds take it without a library of its own.
//
// Both readers are small re-implementations written from the rules, not
// copies: sbatch 22.05's _opt_batch_script() and get_argument() in
// src/sbatch/opt.c, and the POSIX shell's quoting as bash applies it.
#pragma once

#include <cctype>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace dlaunch::script_reader {

// --- sbatch ----------------------------------------------------------------

// What sbatch takes from a script's #SBATCH lines.
struct SbatchDirectives {
  std::vector<std::string> arguments;  // in order: what sbatch hands to getopt_long
  std::string error;                   // non-empty: sbatch would abort, or split the job (why)
};

namespace detail {

// sbatch asks isspace() in the C locale (it sets no other).
inline bool sbatch_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

inline bool starts_het_separator(std::string_view rest) {
  for (std::string_view word : {std::string_view("hetjob"), std::string_view("packjob")}) {
    if (rest.size() < word.size()) continue;
    bool same = true;
    for (std::size_t i = 0; i < word.size(); ++i)
      same = same && std::tolower(static_cast<unsigned char>(rest[i])) == word[i];
    if (same && (rest.size() == word.size() || sbatch_space(rest[word.size()]))) return true;
  }
  return false;
}

// The arguments of one #SBATCH line after the magic word (get_argument()
// called until it returns nothing).
inline void read_sbatch_line(std::string_view line, SbatchDirectives& out) {
  std::size_t i = 0;
  while (true) {
    while (i < line.size() && sbatch_space(line[i])) ++i;
    // A "hetjob" (or the old "packjob") word starts the next component of
    // a heterogeneous job; a leading ':' is a fatal error.
    if (starts_het_separator(line.substr(i))) {
      out.error = "a 'hetjob' word would split the job into components";
      return;
    }
    if (i < line.size() && line[i] == ':') {
      out.error = "an argument starting with ':' makes sbatch abort";
      return;
    }
    if (i == line.size()) return;
    std::string argument;
    bool copied = false, quoted = false, escape = false;
    char quote = '\0';
    for (; i < line.size() && (quoted || !sbatch_space(line[i])); ++i) {
      char c = line[i];
      if (escape) {
        escape = false;  // the escaped character is copied below
      } else if (c == '\\') {
        escape = true;  // escapes the next character, inside quotes too
        continue;
      } else if (quoted) {
        if (c == quote) {
          quoted = false;
          continue;
        }
      } else if (c == '"' || c == '\'') {
        quoted = true;
        quote = c;
        continue;
      } else if (c == '#') {
        i = line.size();  // an unquoted '#': the rest of the line is a comment
        break;
      }
      argument += c;
      copied = true;
    }
    if (quoted) {
      out.error = "an unmatched quote makes sbatch abort";
      return;
    }
    // An argument that copied nothing ('' or "") ends the line's arguments.
    if (!copied) return;
    out.arguments.push_back(argument);
  }
}

}  // namespace detail

// The arguments of SCRIPT's #SBATCH lines: lines are split at '\n'; a line
// starting with "#SBATCH" (or the old "#SLURM") holds options; other lines
// whose first non-blank character is '#', and blank lines, are skipped; the
// first other line (a command) ends the options.
inline SbatchDirectives read_sbatch_directives(std::string_view script) {
  SbatchDirectives out;
  std::size_t start = 0;
  while (start < script.size() && out.error.empty()) {
    std::size_t end = script.find('\n', start);
    if (end == std::string_view::npos) end = script.size();
    std::string_view line = script.substr(start, end - start);
    start = end + 1;
    line = line.substr(0, line.find('\0'));  // sbatch reads each line as a C string
    for (std::string_view magic : {std::string_view("#SBATCH"), std::string_view("#SLURM")}) {
      if (line.starts_with(magic)) {
        detail::read_sbatch_line(line.substr(magic.size()), out);
        line = {};
        break;
      }
    }
    std::size_t first = 0;
    while (first < line.size() && detail::sbatch_space(line[first])) ++first;
    if (first < line.size() && line[first] != '#') break;  // a command: sbatch stops here
  }
  return out;
}

// --- bash ------------------------------------------------------------------

// One command of a script, split into words as bash does before expansion.
struct ShellCommand {
  std::vector<std::string> words;  // quotes removed
  // Per word: it holds, outside single quotes and backslash escapes, a '$'
  // or '`' (an expansion) or any character bash may treat specially
  // (operators, globs, '~', '{', ...): anything but letters, digits and
  // -_./=:,+@%# (the '#' not at the start of a word). Such a word means what
  // its text says only to someone who knows it was written so on purpose.
  std::vector<bool> special;
};

struct ShellScript {
  std::vector<ShellCommand> commands;  // comments and blank lines left out
  std::string error;                   // non-empty: an unterminated quote
};

namespace detail {

inline bool shell_literal(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
         std::string_view("-_./=:,+@%#").find(c) != std::string_view::npos;
}

class ShellReader {
 public:
  explicit ShellReader(std::string_view script) : script_(script) {}

  ShellScript read() {
    while (i_ < script_.size() && out_.error.empty()) step();
    if (quote_ != '\0') out_.error = std::string("unterminated ") + quote_ + " quote";
    end_command();
    return out_;
  }

 private:
  void step() {
    char c = script_[i_++];
    if (quote_ == '\'') {
      if (c == '\'') quote_ = '\0';
      else add(c, false);
    } else if (quote_ == '"') {
      in_double_quotes(c);
    } else if (c == '\\') {
      if (i_ < script_.size() && script_[i_] == '\n') ++i_;  // a line continuation
      else if (i_ < script_.size()) add(script_[i_++], false);
    } else if (c == '\'' || c == '"') {
      quote_ = c;
      in_word_ = true;  // '' is a word, if an empty one
    } else if (c == ' ' || c == '\t') {
      end_word();
    } else if (c == '\n') {
      end_command();
    } else if (c == '#' && !in_word_) {
      while (i_ < script_.size() && script_[i_] != '\n') ++i_;  // a comment
    } else {
      add(c, !shell_literal(c));
    }
  }

  // Inside "...", a backslash escapes only $ ` " \ and a newline; $ and `
  // still expand.
  void in_double_quotes(char c) {
    if (c == '"') {
      quote_ = '\0';
    } else if (c == '\\' && i_ < script_.size() &&
               std::string_view("$`\"\\\n").find(script_[i_]) != std::string_view::npos) {
      char next = script_[i_++];
      if (next != '\n') add(next, false);
    } else {
      add(c, c == '$' || c == '`');
    }
  }

  void add(char c, bool special) {
    word_ += c;
    in_word_ = true;
    special_ = special_ || special;
  }

  void end_word() {
    if (!in_word_) return;
    command_.words.push_back(word_);
    command_.special.push_back(special_);
    word_.clear();
    in_word_ = special_ = false;
  }

  void end_command() {
    end_word();
    if (!command_.words.empty()) out_.commands.push_back(command_);
    command_ = {};
  }

  std::string_view script_;
  std::size_t i_ = 0;
  char quote_ = '\0';
  std::string word_;
  bool in_word_ = false, special_ = false;
  ShellCommand command_;
  ShellScript out_;
};

}  // namespace detail

// SCRIPT's commands as bash splits them: words end at unquoted blanks,
// commands at unquoted newlines; '...' takes everything literally, "..."
// honours \ before $ ` " \ and newline, an unquoted \ escapes the next
// character (a newline: the line goes on), and '#' at the start of a word
// begins a comment that runs to the end of the physical line. Operators
// (; | && ...) are not split off: a command holding one has a special word.
inline ShellScript read_shell_commands(std::string_view script) {
  return detail::ShellReader(script).read();
}

}  // namespace dlaunch::script_reader
