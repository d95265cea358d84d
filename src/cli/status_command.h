// The status command: one submitted job's state, reason, times, nodes,
// restarts, and its failure summary when it failed.
#pragma once

#include "cli/command.h"

namespace dlaunch::cli {

// dlaunch status JOB [--json] [--output-dir DIR]
int status_command(const CommandArgs& args);
util::CommandLineSpec status_command_line();

}  // namespace dlaunch::cli
