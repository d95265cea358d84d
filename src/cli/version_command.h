// `dlaunch version` (and `dlaunch --version`): prints "dlaunch VERSION".
#pragma once

#include "cli/command.h"

namespace dlaunch::cli {

// ARGS excludes "dlaunch version". Returns 0; throws UsageError for an
// argument, naming the nearest option.
int version_command(const CommandArgs& args);
util::CommandLineSpec version_command_line();

}  // namespace dlaunch::cli
