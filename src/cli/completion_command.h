// `dlaunch completion bash|zsh|fish`: prints the shell's completion script
// for every subcommand and its options, taken from the command table and
// each command's parser (cli/completion_script.h).
#pragma once

#include <span>
#include <vector>

#include "cli/command.h"
#include "cli/completion_script.h"

namespace dlaunch::cli {

// ARGS excludes "dlaunch completion"; COMMANDS is dlaunch_main's table.
// Prints the script and returns 0; throws UsageError for a missing or
// unknown shell.
int completion_command(const CommandArgs& args, std::span<const Command> commands);

// The commands of COMMANDS a user may type (not the internal "__" ones),
// each with its command line.
std::vector<CompletedCommand> completed_commands(std::span<const Command> commands);

// The command line of `dlaunch completion`, for its own completion.
util::CommandLineSpec completion_command_line();

}  // namespace dlaunch::cli
