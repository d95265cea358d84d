// Starting one worker process: its own process group, piped output, and
// death with the launcher.
//
// Who starts children how: workers, and the pre-start gate's
// dlaunch-check (gate/gate_process, which hands on the store secret's pipe
// through INHERITED_FDS), are forked and exec'd here; the helper programs
// (scontrol, eu-stack, gdb, nvidia-smi, ...) are started with
// util/program_spawn; the watchdog (process/watchdog) is a fork that never
// execs. Not program_spawn here: between fork and exec a worker needs what
// posix_spawn cannot do (PR_SET_PDEATHSIG, the ptracer that lets a stack
// capture in, joining a cgroup, the launcher's original open-file limit,
// every other descriptor close-on-exec) and an exec-status pipe that tells
// a program that failed to start from one that failed.
#pragma once

#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

#include "util/environment.h"
#include "util/fd.h"

namespace dlaunch::process {

struct StartedWorker {
  pid_t pid = 0;  // also the id of the worker's process group
  util::Fd stdout_pipe;
  util::Fd stderr_pipe;
  util::Fd exec_status;  // closes when exec succeeds; carries errno when it fails
  std::string path;  // the program being executed
};

// The path exec would run for PROGRAM: itself when it contains a '/', else
// the first executable match in PATH (from ENVIRONMENT, as the worker sees
// it). nullopt when there is none.
std::optional<std::string> find_executable(const std::string& program,
                                           const util::Environment& environment);

// Forks and execs ARGV with ENVIRONMENT. The child gets a new process
// group, SIGKILL when the launcher dies, STDIN_FD (default /dev/null) as
// stdin and pipes as stdout/stderr. With CGROUP_PROCS_FD (an open
// cgroup.procs) it joins that cgroup before the exec, so nothing it starts
// is ever outside it. INHERITED_FDS stay open in the program under their
// own numbers (the progress channel, the stack dump pipe); nothing else
// beyond 0-2 does. It does not wait for the exec, so several workers
// start side by side; confirm_exec() tells how it went. Throws SystemError
// when the program is not found or fork fails.
StartedWorker start_worker(const std::vector<std::string>& argv, const util::Environment& environment,
                           int stdin_fd = -1, int cgroup_procs_fd = -1,
                           const std::vector<int>& inherited_fds = {});

// How a worker's start went.
struct ExecResult {
  int error = 0;                // 0: the program runs; else an errno (the child exited with 127)
  bool joining_cgroup = false;  // the error is the cgroup's, not the exec's
};

// Waits until WORKER's exec has happened or failed.
ExecResult confirm_exec(StartedWorker& worker);

}  // namespace dlaunch::process
