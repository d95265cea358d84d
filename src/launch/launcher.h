// `dlaunch run` from a resolved configuration to an exit code.
#pragma once

#include "launch/launch_config.h"
#include "util/environment.h"

namespace dlaunch {

// Meets the other nodes, runs rounds of workers until the job succeeds,
// fails or runs out of restarts, reports, and returns the job's exit code
// (the same on every node). Throws InputError / SystemError for problems
// found before any worker runs.
int run_launcher(const LaunchConfig& config, const Environment& environment);

}  // namespace dlaunch
