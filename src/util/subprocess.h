// Running a helper program (sbatch, squeue, scontrol) and capturing its output.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace dlaunch::util {

struct CapturedRun {
  int exit_code = 0;  // 128+N when killed by signal N
  std::string out;
  std::string err;
};

// Runs ARGV (searched in PATH) to completion with stdin from /dev/null.
// Throws SystemError naming the program when it cannot be started (for
// example "sbatch: not found in PATH").
CapturedRun run_captured(const std::vector<std::string>& argv);

// Starts ARGV (searched in PATH) with this process's stdin, stdout and
// stderr, its signal mask emptied and every signal at its default action,
// whatever the caller blocks or ignores. Returns its pid. Throws
// SystemError naming the program when it cannot be started.
pid_t spawn_inheriting(const std::vector<std::string>& argv);

// Replaces this process with ARGV (searched in PATH). Returns only by
// throwing SystemError naming the program.
[[noreturn]] void exec_replacing(const std::vector<std::string>& argv);

}  // namespace dlaunch::util
