// The jobs command: the submissions dlaunch submit made from here, newest first.
#pragma once

#include "cli/command.h"

namespace dlaunch::cli {

// dlaunch jobs [--json] [--output-dir DIR] [--limit N]
int jobs_command(const CommandArgs& args);
util::CommandLineSpec jobs_command_line();

}  // namespace dlaunch::cli
