// What a run leaves in its log folder for `dlaunch status` and `dlaunch
// logs` to read after the fact, when the launchers are gone and Slurm may
// have forgotten the job:
//   attempt_K/node<N>.json  which host ran node rank N in round K, and its ranks
//   result.json             node rank 0's verdict: exit code, restarts, why it failed
// Both are small JSON files written atomically; a failure to write them is
// reported and never stops the job (they are a record, not the job).
#pragma once

#include <string>
#include <string_view>

#include "rendezvous/world.h"

namespace dlaunch::launch {

inline constexpr std::string_view kRunResultFile = "result.json";

// Writes LOG_ROOT/attempt_<ROUND>/node<NODE_RANK>.json: {"node_rank", "host",
// "ranks": [first..]}. Returns the error text, empty on success.
std::string write_node_record(const std::string& log_root, const rendezvous::World& world, int node_rank,
                              const std::string& host);

// Writes LOG_ROOT/result.json from node rank 0's last VERDICT of round
// ROUND: {"exit_code", "state" (COMPLETED or FAILED), "restarts", "failure"
// (one line), "failure_summary" (the block printed at the end), "timeline",
// "started", "ended"}. Returns the error text, empty on success.
std::string write_run_result(const std::string& log_root, const rendezvous::Verdict& verdict, int round,
                             const std::string& summary, const std::string& started);

}  // namespace dlaunch::launch
