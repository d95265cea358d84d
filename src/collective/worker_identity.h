// Who this worker is in the job, read from the launcher's or Slurm's variables.
#pragma once

#include "collective/communicator.h"
#include "util/environment.h"

namespace dlaunch::collective {

// This worker's identity from the torchrun variables a launcher sets
// (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT, and
// GLOO_SOCKET_IFNAME when set), or, inside an
// srun task without a launcher, from Slurm's task variables. Throws
// InputError naming the missing variable and how to start the program.
WorkerIdentity read_worker_identity(const util::Environment& environment);

}  // namespace dlaunch::collective
