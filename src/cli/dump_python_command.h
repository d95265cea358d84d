// `dlaunch __dump-python PID FD TIMEOUT_MS`: internal, run by a stack
// capture (forensics/stack_capture.h), never by users. Makes worker PID's
// interpreter dump its Python stacks into descriptor FD, which the worker
// inherited from its launcher (forensics/python_dump.h).
//
// A process of its own, not a thread of the launcher: the launcher is the
// worker's parent, and a parent's wait reports the stops of a child that
// one of its own threads traces, so its supervisor would take the stop the
// dump waits for. A helper's stops go to the helper alone, and if it is
// killed at its deadline the kernel detaches the worker.
#pragma once

#include "cli/command.h"

namespace dlaunch::cli {

// Exit 0 once the dump is written; 1 with the reason on stderr; 2 for a bad
// command line.
int dump_python_command(const CommandArgs& args);

}  // namespace dlaunch::cli
