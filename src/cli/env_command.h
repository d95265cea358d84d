// The env command: shows what `dlaunch run` would derive here, and from where.
#pragma once

#include "cli/command.h"

namespace dlaunch::cli {

// dlaunch env [--json] [run options] [PROGRAM ...]
int env_command(const CommandArgs& args);
util::CommandLineSpec env_command_line();

}  // namespace dlaunch::cli
