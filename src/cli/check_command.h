#pragma once

#include "cli/command.h"

namespace dlaunch {

// dlaunch check [--bench|--pairs] [options]: run as a worker under a launcher.
int check_command(const CommandArgs& args);

}  // namespace dlaunch
