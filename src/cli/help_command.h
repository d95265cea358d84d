// `dlaunch help [COMMAND]` (and `dlaunch --help`): the list of
// commands with examples, or COMMAND's own help.
#pragma once

#include <span>

#include "cli/command.h"

namespace dlaunch::cli {

// ARGS excludes "dlaunch help"; COMMANDS is dlaunch_main's table. With a
// COMMAND, runs `dlaunch COMMAND --help`. Throws UsageError for an unknown
// command (naming the nearest) or option.
int help_command(const CommandArgs& args, std::span<const Command> commands);

// The command line of `dlaunch help`: its argument is a command's name.
util::CommandLineSpec help_command_line(std::span<const Command> commands);

}  // namespace dlaunch::cli
