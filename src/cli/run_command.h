// The run command: parses `dlaunch run`'s options and assembles the launch.
#pragma once

#include "cli/command.h"

namespace dlaunch::cli {

// dlaunch run [options] [--] PROGRAM [ARGS...]
int run_command(const CommandArgs& args);

}  // namespace dlaunch::cli
