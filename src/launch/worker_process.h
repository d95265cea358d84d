// Starting one worker process: its own process group, piped output, and
// death with the launcher.
#pragma once

#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

#include "util/environment.h"
#include "util/fd.h"

namespace dlaunch {

struct StartedWorker {
  pid_t pid = 0;  // also the id of the worker's process group
  Fd stdout_pipe;
  Fd stderr_pipe;
  Fd exec_status;  // closes when exec succeeds; carries errno when it fails
  std::string path;  // the program being executed
};

// The path exec would run for PROGRAM: itself when it contains a '/', else
// the first executable match in PATH (from ENVIRONMENT, as the worker sees
// it). nullopt when there is none.
std::optional<std::string> find_executable(const std::string& program,
                                           const Environment& environment);

// Forks and execs ARGV with ENVIRONMENT. The child gets a new process
// group, SIGKILL when the launcher dies, STDIN_FD (default /dev/null) as
// stdin and pipes as stdout/stderr. It does not wait for the exec, so
// several workers start side by side; confirm_exec() tells how it went.
// Throws SystemError when the program is not found or fork fails.
StartedWorker start_worker(const std::vector<std::string>& argv, const Environment& environment,
                           int stdin_fd = -1);

// Waits until WORKER's exec has happened. Returns 0 when it succeeded, else
// the errno of the failed exec (the child has then exited with 127).
int confirm_exec(StartedWorker& worker);

}  // namespace dlaunch
