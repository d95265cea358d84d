// Quoting words for a POSIX shell: job scripts and remote ssh commands.
#pragma once

#include <string>
#include <vector>

namespace dlaunch {

// WORD as the shell reads it back unchanged: bare when it holds only safe
// characters, else in single quotes (a quote inside as '\'').
std::string shell_quote(const std::string& word);

// The words quoted and joined with spaces.
std::string shell_join(const std::vector<std::string>& words);

}  // namespace dlaunch
