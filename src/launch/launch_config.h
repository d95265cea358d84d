// Everything `dlaunch run` needs to know, checked and resolved.
//
// Resolution order for each value: command-line flag, then its PET_*
// variable, then what a Slurm step says, then SkyPilot's SKYPILOT_*
// variables, then torchrun's default. Every
// value keeps its source so `dlaunch env` can show it.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "launch/run_options.h"
#include "launch/worker_python.h"
#include "util/console.h"
#include "util/environment.h"
#include "util/sourced.h"
#include "service/job_settings.h"
#include "slurm/bench_record.h"

namespace dlaunch::launch {

struct Topology {
  util::Sourced<int> nnodes;       // the training size
  // Launchers beyond nnodes that stand by to take a lost node's place.
  util::Sourced<int> spare_nodes{0, "default"};
  // This launcher's place in the job, 0 to launchers() - 1. Without spares
  // it is the node rank; with spares the rendezvous gives node ranks anew
  // each round.
  // -1: none of its own; node 0's service gives each launcher its slot as
  // it joins (by arrival: --rdzv-backend c10d without --node-rank).
  util::Sourced<int> node_rank;
  util::Sourced<int> nproc_per_node;
  util::Sourced<std::string> master_addr;
  // The rendezvous port for several nodes; for one node, the workers' own
  // MASTER_PORT. nullopt: pick a free port.
  std::optional<util::Sourced<int>> master_port;
  util::Sourced<std::string> run_id;
  bool in_slurm = false;
  bool in_skypilot = false;  // placed by SKYPILOT_* variables (launch/skypilot_context.h)
  std::vector<std::string> notices;  // things worth telling the user (batch step, ...)
  // Where each slot's launcher runs, when Slurm places them (the step's
  // node list); empty: unknown. Node 0 names missing nodes by host.
  std::vector<std::string> expected_hosts;

  // Every launcher of the job: training nodes and spares.
  int launchers() const { return nnodes.value + spare_nodes.value; }
  // Node ranks come from the rendezvous, in the order launchers join.
  bool rank_by_arrival() const { return node_rank.value < 0; }
};

// Which of a worker's streams go to files and whether they also reach the console.
enum StreamMask : unsigned { kNoStream = 0, kStdout = 1, kStderr = 2, kBothStreams = 3 };

struct StreamRouting {
  // Per local rank; a missing rank uses default_mask.
  unsigned default_mask = kNoStream;
  std::map<int, unsigned> per_rank;
  unsigned mask_for(int local_rank) const;
};

// How the launcher catches processes that escape their worker's process
// group (--kill-escaped; launch/escaped_processes.h).
enum class KillEscaped { kOff, kSubreaper, kCgroup };

// "off", "subreaper", "cgroup".
const char* kill_escaped_name(KillEscaped mode);
const char* console_overflow_name(util::ConsoleOverflow overflow);

// dlaunch run's --shutdown-timeout when none is given.
inline constexpr std::chrono::seconds kDefaultShutdownTimeout{30};

struct LaunchConfig {
  Topology topology;
  std::vector<std::string> command;  // the worker's argv (interpreter included)
  std::optional<WorkerPython> python;  // the interpreter, when the workers run under Python
  std::string role = "default";
  std::chrono::milliseconds shutdown_timeout{kDefaultShutdownTimeout};
  std::optional<std::string> log_dir;  // nullopt: no per-worker files unless -r/-t ask
  StreamRouting redirects;             // file only
  StreamRouting tee;                   // file and console
  std::optional<std::vector<int>> local_ranks_filter;
  std::string prefix_template = "[rank{rank}]:";

  // Reliability and security (docs/RELIABILITY.md).
  // nullopt: the rendezvous is not authenticated. Kept with its source for
  // `dlaunch env`; job.token holds the same secret.
  std::optional<util::Sourced<std::string>> rdzv_token;
  int preempt_signal = 0;  // 0: none; else forwarded and remembered as a preemption
  bool requeue = false;    // node 0 requeues the Slurm job after a preemption
  bool allow_uneven = false;
  bool stop_on_stdin_close = false;
  // subreaper everywhere by default, Slurm steps included: Slurm tracks a
  // step's processes with a cgroup of its own.
  util::Sourced<KillEscaped> kill_escaped{KillEscaped::kSubreaper, "default"};
  util::Sourced<util::ConsoleOverflow> console_overflow{util::ConsoleOverflow::kBlock, "default"};
  bool log_dir_required = false;  // a log file that cannot be written stops the job

  // Node replacement (docs/RELIABILITY.md, "Spare nodes").
  std::optional<std::string> exit_code_file;
  // --end-job-after: nullopt: never cancels the Slurm job itself.
  std::optional<std::chrono::milliseconds> end_job_after;
  // --bench-record: where node 0 keeps the hosts dlaunch benched when it
  // requeues the job (slurm/bench_record.h); nullopt: no record, no exclusion.
  std::optional<std::string> bench_record;
  std::int64_t bench_cooldown_s = slurm::kDefaultBenchCooldown;  // --bench-cooldown, in seconds

  // What every launcher and node 0's service share (node 0's values rule):
  // the job options of launch/job_options.h, the topology's sizes and run
  // id, and the token. The coordinator takes it whole.
  rendezvous::JobSettings job;
};

// What resolve_launch_config may look up on this machine. kThisNode: it
// runs here (dlaunch run, env). kElsewhere: the options are checked for a
// node that is not this machine (dlaunch submit and ssh check what they hand
// on: launch/hand_off_check.h), so what only that node can tell is not
// judged from here: the interpreter is not looked up in this PATH, and a
// --rdzv-token-file on the node's disk is not read.
enum class HostLookups { kThisNode, kElsewhere };

// Resolves OPTIONS against ENVIRONMENT. Throws InputError naming the
// offending flag or variable, the value, and what was expected; and for a
// place where the job cannot form (launch/launch_site.h), what to run instead.
LaunchConfig resolve_launch_config(const RunOptions& options, const util::Environment& environment,
                                   HostLookups lookups = HostLookups::kThisNode);

// The default --port-range: below Linux's ephemeral ports (32768 and up),
// so a derived port does not collide with a client socket's.
inline constexpr int kDefaultPortRangeLow = 20000;
inline constexpr int kDefaultPortRangeHigh = 32767;

// The port of a Slurm step, derived from its job and step id in
// [low, high], so that jobs sharing a node use different ports.
int derive_slurm_port(const std::string& job_id, std::optional<std::uint64_t> step_id, int low,
                      int high);

// The worker's argv for OPTIONS.command: PROGRAM itself, or the Python
// interpreter (--python, else PYTHON_EXEC, else python3) running it with -u
// for .py files and -m modules. Throws InputError for --no-python with -m.
std::vector<std::string> worker_command(const RunOptions& options, const util::Environment& environment);

// Parses torchrun's -r/-t value: "3" or "0:1,1:2".
StreamRouting parse_stream_routing(const Setting& setting);

}  // namespace dlaunch::launch
