// The text of `dlaunch completion bash|zsh|fish`: a shell's completion
// script for every subcommand and its options, written from the command
// lines the parsers describe (util/command_line_spec.h), so it cannot
// drift from them. Pure: the same commands give the same script.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/command_line_spec.h"

namespace dlaunch::cli {

struct CompletedCommand {
  std::string name;     // "run"
  std::string summary;  // its line in `dlaunch help`
  util::CommandLineSpec command_line;
};

// The shells there is a script for, as `dlaunch completion` takes them.
inline const std::vector<std::string> kCompletionShells = {"bash", "zsh", "fish"};

// The script for SHELL (one of kCompletionShells); nullopt for another shell.
std::optional<std::string> completion_script(std::string_view shell,
                                             const std::vector<CompletedCommand>& commands);

std::string bash_completion(const std::vector<CompletedCommand>& commands);
std::string zsh_completion(const std::vector<CompletedCommand>& commands);
std::string fish_completion(const std::vector<CompletedCommand>& commands);

}  // namespace dlaunch::cli
