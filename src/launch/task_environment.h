// The torchrun environment of one srun task (`dlaunch exec`, --launch task).
//
// When srun itself starts one task per GPU, there is no launcher per node:
// each task maps Slurm's own task variables onto torchrun's and replaces
// itself with the program. Pure, so every layout is unit-tested.
#pragma once

#include "util/environment.h"

namespace dlaunch::launch {

// Adds RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK,
// GROUP_WORLD_SIZE, ROLE_*, MASTER_ADDR, MASTER_PORT and the TORCHELASTIC_*
// variables to ENVIRONMENT from SLURM_PROCID, SLURM_LOCALID, SLURM_NTASKS,
// SLURM_NODEID, SLURM_TASKS_PER_NODE and the step's node list. Throws
// InputError naming a missing or malformed SLURM_ variable.
void add_task_environment(util::Environment& environment);

}  // namespace dlaunch::launch
