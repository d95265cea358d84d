// The exec command: one srun task becomes one torchrun-style worker.
#pragma once

#include "cli/command.h"

namespace dlaunch::cli {

// dlaunch exec [--python X] [--no-python] [-m] [--] PROGRAM [ARGS...]
// Inside an srun task: sets torchrun's variables from Slurm's, then becomes PROGRAM.
int exec_command(const CommandArgs& args);

}  // namespace dlaunch::cli
