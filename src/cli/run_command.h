#pragma once

#include "cli/command.h"

namespace dlaunch {

// dlaunch run [options] [--] PROGRAM [ARGS...]
int run_command(const CommandArgs& args);

}  // namespace dlaunch
