// Making a running CPython worker write its own Python stacks, by calling
// _Py_DumpTracebackThreads (what faulthandler runs from its signal
// handlers) on its main thread with ptrace.
//
// Why by hand: gdb does the same call, but it stops the whole worker for
// 200 ms or more per attach (measured; seconds when many attach at once on
// few cores), which a live capture must not cost a training job. Here only
// the main thread stops, for the dump itself (about a millisecond); the
// other threads (gloo's, NCCL's, a data loader's) run on. The function
// needs no GIL, so it works while the worker sits in a system call. The
// dump goes to a descriptor the worker inherited from its launcher for this
// purpose (a non-blocking pipe, so a full pipe cuts the dump short rather
// than blocking the worker). x86-64 only; elsewhere, and when this fails,
// the capture falls back to gdb.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <sys/types.h>

namespace dlaunch::forensics {

// True where dump_python_stacks can work (x86-64 Linux).
bool can_inject_python_dump();

// Makes PID call FUNCTION(FD_IN_WORKER, NULL, NULL) on its main thread and
// resume exactly where it was (a system call it was in is restarted).
// FD_IN_WORKER is a descriptor PID holds. Waits at most TIMEOUT for each
// stop. Returns "" on success, else what went wrong ("ptrace refused:
// ..."). A fault inside the call is caught and the worker resumes as if
// nothing happened. Call it from a thread that ends soon after: if PID
// never stops in time, that thread's exit detaches it.
std::string dump_python_stacks(pid_t pid, std::uintptr_t function, int fd_in_worker,
                               std::chrono::milliseconds timeout);

}  // namespace dlaunch::forensics
