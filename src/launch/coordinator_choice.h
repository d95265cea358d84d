// Which coordinator a launcher meets the other nodes through, made from its
// resolved configuration: one node (or --standalone) meets nobody
// (rendezvous/local_coordinator.h); several meet at node 0's rendezvous
// (rendezvous/rendezvous_coordinator.h), with the settings the launcher and
// node 0's service take from the command line.
#pragma once

#include <memory>
#include <string>

#include "launch/launch_config.h"
#include "process/signal_channel.h"
#include "rendezvous/coordinator.h"

namespace dlaunch::launch {

// This node's coordinator, once the launcher has its signal channel (node
// 0's rendezvous service then starts on a thread that inherits the blocked
// signals), knows its HOST and the run's LOG_FOLDER (where stack reports
// and the job's records go).
std::unique_ptr<rendezvous::Coordinator> make_coordinator(const LaunchConfig& config,
                                                          process::SignalChannel& signals,
                                                          const std::string& host,
                                                          const std::string& log_folder);

}  // namespace dlaunch::launch
