// Starting a helper program with posix_spawn: the one place dlaunch starts
// the short programs it runs beside its workers (sbatch, scontrol, ssh,
// eu-stack, gdb), each with the same hygiene: an empty signal mask and
// every signal at its default action, whatever the caller blocks or
// ignores for its own signalfd, and standard input from /dev/null unless
// the caller hands its own on.
//
// Workers are not started here: they need what posix_spawn cannot do
// between fork and exec (process/worker_process.h says what).
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace dlaunch::util {

struct ProgramSpawn {
  std::vector<std::string> argv;  // argv[0] is searched in PATH unless it holds a '/'
  // "NAME=value" entries; nullopt: this process's environment.
  std::optional<std::vector<std::string>> environment;
  bool inherit_stdin = false;  // false: /dev/null
  int stdout_fd = -1;          // -1: this process's
  int stderr_fd = -1;          // -1: this process's
  // In a process group of its own: a signal for the caller's terminal
  // (Ctrl-C) does not reach it, and killing the group takes its children.
  bool own_process_group = false;
};

// The started program's pid, or the errno that kept it from starting.
struct SpawnedProgram {
  pid_t pid = -1;
  int error = 0;
};

SpawnedProgram spawn_program(const ProgramSpawn& request);

}  // namespace dlaunch::util
