// The words a user reads when a job ends badly.
#pragma once

#include <optional>
#include <string>

#include "wire/world.h"

namespace dlaunch::launch {

// What only the node where the first failure happened knows about it.
struct LocalFailureFacts {
  std::optional<std::string> python;  // the workers' interpreter (launch/worker_python.h describe())
  std::optional<std::string> hint;    // a line on what to do (launch/worker_python.h import_hint())
};

// A multi-line summary of VERDICT for stderr: which worker failed first
// (global and local rank, node, pid, exit code or signal name, time, log
// file, its last lines), and what that means for this node. LOCAL's facts
// are shown when the failure happened on THIS_NODE_RANK.
std::string format_failure_summary(const rendezvous::Verdict& verdict, int this_node_rank,
                                   const LocalFailureFacts& local = {});

}  // namespace dlaunch::launch
