// The ssh command: parses `dlaunch ssh`'s options and starts a launcher per host.
#pragma once

#include "cli/command.h"

namespace dlaunch::cli {

// dlaunch ssh (--hosts H1,H2 | --hostfile FILE) [options] [run options] [--] PROGRAM [ARGS...]
int ssh_command(const CommandArgs& args);

}  // namespace dlaunch::cli
