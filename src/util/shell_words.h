// Quoting words for a POSIX shell (job scripts, remote ssh commands) and for
// sbatch's #SBATCH lines.
#pragma once

#include <string>
#include <vector>

namespace dlaunch::util {

// WORD as the shell reads it back unchanged: bare when it holds only safe
// characters, else in single quotes (a quote inside as '\'').
std::string shell_quote(const std::string& word);

// The words quoted and joined with spaces.
std::string shell_join(const std::vector<std::string>& words);

// WORD as sbatch reads it back, as one argument, from a `#SBATCH WORD` line.
// sbatch (22.05, get_argument() in src/sbatch/opt.c) splits the line at
// whitespace, honours single and double quotes, reads a backslash as
// escaping the next character even inside quotes, ends the line's arguments
// at an unquoted '#', aborts on an argument that starts with ':', and takes
// an argument "hetjob" or "packjob" as the start of a heterogeneous job's
// next component. WORD is bare when none of that can touch it (so plain
// options read as before: --constraint=a100&ib), else single-quoted with
// every ' and \ written outside the quotes as \' and \\, which a POSIX shell
// reads back the same way. WORD must not be empty (sbatch takes an empty
// argument as the end of the line) nor hold a newline or NUL (they end the
// line): callers refuse those, since no quoting can carry them.
std::string sbatch_quote(const std::string& word);

}  // namespace dlaunch::util
