// The check command: hands `dlaunch check` to the dlaunch-check program.
#pragma once

#include "cli/command.h"

namespace dlaunch::cli {

// dlaunch check ...: replaces this process with dlaunch-check (installed
// beside dlaunch), which holds the check and its gloo dependency.
int check_command(const CommandArgs& args);

}  // namespace dlaunch::cli
