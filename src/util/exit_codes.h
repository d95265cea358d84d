// Every exit code a dlaunch command ends with, in one table, and the one
// translation between a child's wait status, a signal and an exit code.
//
// docs/EXIT_CODES.md says the same for users; change both together. A
// worker's own code is passed through unchanged, so any other number a job
// ends with is a worker's.
#pragma once

#include <optional>
#include <string>

namespace dlaunch::util {

// Every worker succeeded; the command did what was asked.
inline constexpr int kExitSuccess = 0;

// The outside world failed (SystemError: a syscall, a peer, a timeout), a
// job failed without a worker's code to pass on (a lost node, a stopped
// rendezvous), `dlaunch check` found a wrong value, `dlaunch stacks` found
// no job to ask.
inline constexpr int kExitFailure = 1;

// The user gave something wrong: a flag, a variable, a file, a folder
// (InputError, and UsageError for a malformed command line).
inline constexpr int kExitUsage = 2;

// The job failed the same way twice in a row with no progress between
// (doctor/repeat_guard.h), so dlaunch did not spend its restarts: a bug to
// fix, not a fault to retry. 3 is free below the signal range, and no
// launcher or scheduler gives it a meaning; a job script or a requeue hook
// reads it as "do not requeue".
inline constexpr int kExitDeterministic = 3;

// The job hung: no worker made progress for --hang-timeout, and the stacks
// were saved. The number timeout(1) uses for "it ran out of time".
inline constexpr int kExitHang = 124;

// A program could not be started at all (not found, not executable): the
// shell's number for it, so a worker whose exec failed reads as one.
inline constexpr int kExitCannotRun = 127;

// 128+N: ended by signal N (a worker killed by SIGKILL ends the job with
// 137), as a shell reports it; dlaunch itself, stopped by SIGTERM while it
// waited, exits 143.
inline constexpr int kExitSignalBase = 128;

// The exit code that says "ended by SIGNAL": 128+SIGNAL.
constexpr int exit_code_of_signal(int signal) { return kExitSignalBase + signal; }

// The signal behind CODE when it is 128+N for a signal N (1 to 64); nullopt
// for a plain exit code. A worker may exit 130 by itself, so this reads the
// convention, not proof that a signal came.
std::optional<int> signal_of_exit_code(int code);

// A reaped child's exit code from its waitpid() status: its own code, or
// 128+N when signal N ended it; -1 when it has not ended (stopped or
// continued). Async-signal-safe.
int exit_code_of_wait_status(int wait_status);

// The signal that ended a reaped child, from its waitpid() status; 0 when
// it exited by itself. Async-signal-safe.
int signal_of_wait_status(int wait_status);

// CODE in words for a message: "exit code 3", "exit code 137 (SIGKILL)".
std::string describe_exit_code(int code);

}  // namespace dlaunch::util
