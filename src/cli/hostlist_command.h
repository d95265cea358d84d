// `dlaunch hostlist expand|compress|first|count EXPR...`: Slurm hostlist
// expressions from the shell, byte for byte as scontrol prints them, for job
// scripts on machines without a slurm.conf (where scontrol will not start).
#pragma once

#include "cli/command.h"

namespace dlaunch::cli {

// ARGS excludes "dlaunch hostlist". Prints to stdout and returns 0; throws
// UsageError for a bad command line and InputError for a bad expression.
int hostlist_command(const CommandArgs& args);
util::CommandLineSpec hostlist_command_line();

}  // namespace dlaunch::cli
