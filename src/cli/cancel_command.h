// The cancel command: cancels a submitted job and waits until it is gone.
#pragma once

#include "cli/command.h"

namespace dlaunch::cli {

// dlaunch cancel JOB [--signal SIG [--grace SECONDS]] [--timeout SECONDS] [--json]
int cancel_command(const CommandArgs& args);
util::CommandLineSpec cancel_command_line();

}  // namespace dlaunch::cli
