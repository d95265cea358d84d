// What a run leaves in its log folder for `dlaunch status` and `dlaunch
// logs` to read after the fact, when the launchers are gone and Slurm may
// have forgotten the job:
//   attempt_K/node<N>.json  which host ran node rank N in round K, and its ranks
//   result.json             the verdict of the launcher that speaks for the
//                           job: exit code, restarts, why it failed
// Both are small JSON files written atomically; a failure to write them is
// reported and never stops the job (they are a record, not the job). Each
// names the job's incarnation ("job"), so records of an earlier run in the
// same folder are told apart.
//
// They are also what a launcher the job left behind reads (a node that was
// frozen or cut off, then came back) before it acts for the job again: a
// later round's node records, or a result, mean the job went on without it
// (job_moved_on), and it stops instead of taking the rendezvous over.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "rendezvous/rendezvous_coordinator.h"
#include "wire/world.h"

namespace dlaunch::launch {

inline constexpr std::string_view kRunResultFile = "result.json";

// Beside the exit-code file (--exit-code-file), the job script's step guard
// (submit/step_guard.h) writes this file once it has read the verdict: the
// batch script lives, and will end the job. A launcher that speaks for the
// job from another host than the batch host waits for it; without it, it
// takes the batch host for lost and ends the job itself.
inline constexpr std::string_view kVerdictSeenSuffix = ".seen";

// Writes LOG_ROOT/attempt_<ROUND>/node<NODE_RANK>.json: {"node_rank", "host",
// "ranks": [first..]}. Returns the error text, empty on success.
std::string write_node_record(const std::string& log_root, const rendezvous::World& world, int node_rank,
                              const std::string& host);

// What result.json records of the job's end.
struct RunResult {
  const rendezvous::Verdict& verdict;  // the last one, of round ROUND
  int round = 0;
  std::string summary;      // the failure summary printed at the end ("" on success)
  std::string started;      // when the launcher started, local time
  std::string incarnation;  // the job's (World::incarnation)
  std::string host;         // where the launcher that wrote it runs
};

// Writes LOG_ROOT/result.json: {"exit_code", "state" (COMPLETED or FAILED),
// "restarts", "failure" (one line), "failure_summary" (the block printed at
// the end), "timeline", "started", "ended", "job", "written_by",
// "decided_alone" (by a launcher that lost node 0, not by a service)}. A verdict
// this launcher made alone (it lost node 0) replaces no result of this job
// already there (a service's verdict, when there is one, says more; what
// this launcher saw is added to it as "also_seen", the other side of a
// network cut), but does replace one an earlier run of the folder left.
// Returns the error text, empty on success (or when this job's result was
// kept).
std::string write_run_result(const std::string& log_root, const RunResult& result);

// Adds "slurm_end" (TEXT: how the Slurm job was ended, when dlaunch ended
// it) to LOG_ROOT/result.json, when it holds the result of the job of
// INCARNATION. Returns the error text, empty on success.
std::string note_slurm_end(const std::string& log_root, const std::string& incarnation, const std::string& text);

// Whether the records in LOG_ROOT show that the job of PLACE.incarnation
// went on without the launcher at PLACE (a later round's node records) or
// ended (a result; not one another launcher made alone in PLACE's own round,
// having lost node 0 at the same moment): the one line that says so, or
// nullopt. Reads a few
// small files; the caller bounds the time (util/bounded_call.h).
std::optional<std::string> job_moved_on(const std::string& log_root, const rendezvous::LauncherPlace& place);

}  // namespace dlaunch::launch
