// The submit command: parses `dlaunch submit`'s options and submits the job.
#pragma once

#include "cli/command.h"

namespace dlaunch::cli {

// dlaunch submit [options] [--] PROGRAM [ARGS...]
int submit_command(const CommandArgs& args);

}  // namespace dlaunch::cli
