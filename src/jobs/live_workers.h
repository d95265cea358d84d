// The workers of a run's log folder that are alive on this host, found in
// /proc, for `dlaunch status`, `logs --follow` and `stacks` of a --log-dir
// of dlaunch run: a single-node run has no service to ask and leaves no
// record of its own until it ends.
//
// dlaunch run gives each worker TORCHELASTIC_ERROR_FILE=
// LOG_DIR/attempt_K/rankR/error.json (launch/worker_plan.h), and a
// process's starting environment stays readable by its own user in
// /proc/PID/environ, whatever the process did to its environment since.
// The launcher hides its memory (util/process_secrets.h), so it is known
// only as the workers' parent.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace dlaunch::jobs {

// A process as /proc shows it: its pid and when it started (in clock ticks
// after boot), so that a pid used again by another process is told apart.
struct ProcessIdentity {
  pid_t pid = 0;
  unsigned long long start_time = 0;
  bool operator==(const ProcessIdentity&) const = default;
};

struct LiveWorker {
  pid_t pid = 0;
  int rank = -1;
  int local_rank = -1;
  int node_rank = -1;
  int attempt = -1;
  ProcessIdentity launcher;  // its parent
  // Its parent is a dlaunch process. When the launcher is gone (killed past
  // its watchdog), its workers are left to another process (init, a
  // subreaper), and nothing writes their logs any more.
  bool launcher_alive = false;
};

// The workers of LOG_DIR alive on this host, by rank: the processes whose
// TORCHELASTIC_ERROR_FILE lies in LOG_DIR/attempt_K/ and whose parent's
// does not (so a worker's own children are not counted). Only this user's
// processes can be read; others are passed over. PROC is where /proc is
// (tests give a folder shaped like it).
std::vector<LiveWorker> find_live_workers(const std::string& log_dir, const std::string& proc = "/proc");

// PROCESS as /proc shows it now, or nullopt when no process has its pid.
std::optional<ProcessIdentity> identity_of(pid_t pid, const std::string& proc = "/proc");

// Whether PROCESS still runs: its pid is there and started when it did.
bool still_running(const ProcessIdentity& process, const std::string& proc = "/proc");

// Whether WORKERS' launcher is gone: none of them has a dlaunch parent.
bool launcher_gone(const std::vector<LiveWorker>& workers);

// "ranks 0-1 of attempt 0 (pids 101, 102), launcher pid 100" (or "left to
// pid 1, their launcher gone"): for messages.
std::string describe_live_workers(const std::vector<LiveWorker>& workers);

}  // namespace dlaunch::jobs
