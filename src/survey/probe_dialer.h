// The prober's end of a reachability probe (survey/probe_responder.h):
// which addresses of the other launchers this host actually reaches.
#pragma once

#include <chrono>
#include <vector>

#include "survey/probe_responder.h"
#include "wire/protocol.h"

namespace dlaunch::rendezvous {

// Probes every target at once (at most kMostProbeConnections connections
// open together), each within TIMEOUT: connect, take the challenge, prove
// ME, and check that the launcher there proves it is the target's slot of
// this job. One outcome per target, in the order given; never throws for an
// unreachable or lying peer.
std::vector<ProbeOutcome> probe_targets(const std::vector<ProbeTarget>& targets, const ProbeIdentity& me,
                                        std::chrono::milliseconds timeout);

}  // namespace dlaunch::rendezvous
