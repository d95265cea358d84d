// `dlaunch stacks` of a run that has no rendezvous service to ask: a
// single node's dlaunch run, whose launcher judges its hangs itself and
// answers no one. Its workers alive on this host are found through /proc
// (jobs/live_workers.h) and captured from here as their launcher would
// (forensics/stack_capture.h), Python frames through gdb, since the
// workers' dump pipes lead to their launcher only. The same user may
// trace them unless the kernel forbids tracing a process that is not one's
// child (Yama's ptrace_scope 1 and above): each worker's problems then say
// that ptrace was refused.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "forensics/stack_sample.h"

namespace dlaunch::cli {

struct LocalCapture {
  std::string headline;  // what was captured, from where
  std::vector<forensics::WorkerStacks> workers;
};

// The stacks of the workers of the run in LOG_FOLDER that run on this host,
// each tool bounded by PER_WORKER. Throws InputError saying what the folder
// shows and where to look when none runs here.
LocalCapture capture_local_run(const std::string& log_folder, std::chrono::seconds per_worker);

}  // namespace dlaunch::cli
