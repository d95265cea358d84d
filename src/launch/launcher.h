// `dlaunch run` from a resolved configuration to an exit code.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "launch/launch_config.h"
#include "process/signal_channel.h"
#include "rendezvous/coordinator.h"
#include "util/environment.h"

namespace dlaunch::launch {

// Makes this node's coordinator once the launcher has its signal channel,
// its HOST and the run's LOG_FOLDER (launch/coordinator_choice.h makes the
// real one; tests give their own).
using CoordinatorFactory = std::function<std::unique_ptr<rendezvous::Coordinator>(
    process::SignalChannel& signals, const std::string& host, const std::string& log_folder)>;

// Meets the other nodes through the coordinator MAKE_COORDINATOR makes,
// runs rounds of workers until the job succeeds, fails or runs out of
// restarts, reports, and returns the job's exit code (the same on every
// node). Throws InputError / SystemError for problems found before any
// worker runs.
int run_launcher(const LaunchConfig& config, const util::Environment& environment,
                 const CoordinatorFactory& make_coordinator);
// The same with the coordinator CONFIG calls for (launch/coordinator_choice.h).
int run_launcher(const LaunchConfig& config, const util::Environment& environment);

}  // namespace dlaunch::launch
