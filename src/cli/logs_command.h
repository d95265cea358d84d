// The logs command: a submitted job's worker output from its per-rank files.
#pragma once

#include "cli/command.h"

namespace dlaunch::cli {

// dlaunch logs JOB [--rank R,...] [--node N] [--attempt K] [--follow] [--tail N] [--grep RE]
int logs_command(const CommandArgs& args);
util::CommandLineSpec logs_command_line();

}  // namespace dlaunch::cli
