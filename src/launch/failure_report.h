// The words a user reads when a job ends badly.
#pragma once

#include <string>

#include "wire/world.h"

namespace dlaunch::launch {

// A multi-line summary of VERDICT for stderr: which worker failed first
// (global and local rank, node, pid, exit code or signal name, time, log
// file, its last lines), and what that means for this node.
std::string format_failure_summary(const rendezvous::Verdict& verdict, int this_node_rank);

}  // namespace dlaunch::launch
