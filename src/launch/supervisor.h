// Runs one round of a node's workers to the end.
//
// A single-threaded event loop (process/event_loop.h): worker output
// pipes, the signalfd (worker exits and signals to the launcher), the
// coordinator's descriptor and deadlines (heartbeats), the SIGTERM to
// SIGKILL grace period, the drain after the last exit, and a stalled
// console while it has a backlog to write. There is no polling interval:
// every reaction is to an event or a deadline. Nothing in it waits for a
// console or a log file's reader, so heartbeats and signals are always
// handled.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "launch/escaped_processes.h"
#include "launch/worker_plan.h"
#include "process/log_file_fault.h"
#include "process/signal_channel.h"
#include "process/watchdog.h"
#include "rendezvous/coordinator.h"
#include "util/console.h"
#include "wire/world.h"

namespace dlaunch::launch {

struct SupervisorSettings {
  std::chrono::milliseconds shutdown_timeout{30'000};
  int node_rank = 0;
  std::string host;
  // Where prefixed worker lines (and the launcher's notices) go; null: the
  // process's console_out() / console_err().
  util::ConsoleSink* console_stdout = nullptr;
  util::ConsoleSink* console_stderr = nullptr;
  std::size_t summary_lines = 10;  // lines of a failed worker's output in its Failure
  int preempt_signal = 0;          // forwarded like any other, and remembered in the outcome
  bool log_dir_required = false;   // a log file that cannot be written stops the round as a failure
  // Kills what the workers left outside their groups at the end of the
  // round; null: nothing beyond the groups.
  EscapedProcesses* escapes = nullptr;
  // How long each stack tool may take per worker, when the coordinator asks
  // for the workers' stacks (a hang, `dlaunch stacks`).
  std::chrono::milliseconds capture_timeout{5'000};
  // Every log file that could not be written in full is added here; null: not kept.
  std::vector<process::IncompleteLog>* incomplete_logs = nullptr;
  // The process group of every worker the round started is added here, for
  // the health check before the next round; null: not kept.
  std::vector<pid_t>* worker_groups = nullptr;
};

// Starts every worker of PLAN, relays their output, forwards signals, and
// stops them all when one fails, a stop signal arrives, or COORDINATOR asks.
// Returns when every worker has exited and its output is relayed. Throws
// SystemError when a worker cannot be started (the ones already started
// are stopped first).
rendezvous::NodeOutcome supervise(const WorkerPlan& plan, const SupervisorSettings& settings,
                                  rendezvous::Coordinator& coordinator, process::SignalChannel& signals,
                                  process::Watchdog& watchdog);

}  // namespace dlaunch::launch
