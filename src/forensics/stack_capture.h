// Capturing the stacks of running workers without stopping them for long.
//
// Native frames of every thread come from elfutils' eu-stack, measured at
// about 40 ms for a PyTorch worker (it stops the worker for under 10 ms):
// it attaches with ptrace, unwinds, and detaches. Python frames come from
// CPython itself: _Py_DumpTracebackThreads, the function faulthandler runs
// from its signal handlers, called on the worker's main thread. It needs no
// GIL and works while the worker sits in a system call (time.sleep, a
// collective), and the worker goes on afterwards, so the same capture
// serves a live `dlaunch stacks` and a hang's report. Debian's python3.11
// exports that function; gdb's own py-bt would need python3-dbg, and
// PYTHONFAULTHANDLER alone dumps only on a fatal signal, which would kill
// the worker. The call is made here with ptrace (forensics/python_dump.h:
// about a millisecond, only the main thread stopped) into a pipe the worker
// inherited, by a helper process (cli/dump_python_command.h says why not a
// thread); without that pipe, off x86-64, or when it fails, gdb makes
// the call (it stops the whole worker for 200 ms or more, and its own
// start costs 0.4 s of CPU). The tools run one after the other on a worker
// (only one tracer may attach) and side by side across workers, at most
// one per core, each within the capture's timeout.
#pragma once

#include <chrono>
#include <string>
#include <sys/types.h>
#include <vector>

#include "forensics/stack_sample.h"
#include "util/environment.h"

namespace dlaunch::forensics {

struct CaptureTarget {
  pid_t pid = 0;
  int rank = -1;
  int local_rank = -1;
  int node_rank = -1;
  std::string host;
  // A pipe the worker inherited for its Python stacks (forensics/python_dump.h):
  // its number in the worker, and the read end here. -1: none, gdb instead.
  int dump_fd_in_worker = -1;
  int dump_read_fd = -1;
};

struct CaptureSettings {
  std::chrono::milliseconds timeout{5000};  // per tool and worker
  // Where eu-stack and gdb are looked up (PATH).
  util::Environment environment;
  // dlaunch's own executable, whose `__dump-python` makes the Python dumps
  // through the workers' dump pipes; "": gdb makes them.
  std::string dlaunch;
};

// The stacks of every target, in the order given. What could not be
// captured is said in each one's `problems` (a tool missing, a worker
// gone, ptrace refused, a deadline passed). Never throws for a worker.
std::vector<WorkerStacks> capture_stacks(const std::vector<CaptureTarget>& targets,
                                         const CaptureSettings& settings);

// Whether PID runs a CPython interpreter: its executable is named python*.
// (Debian's interpreter links libpython statically, so the maps show no
// libpython; the name is what is there to go by.)
bool runs_python(pid_t pid);

}  // namespace dlaunch::forensics
