// The project's error model, in one place.
//
// Errors that stop the run are exceptions from this small family, caught once
// in dlaunch_main() and mapped to an exit code there (util/exit_codes.h):
//   InputError (UsageError)  the user gave something wrong          exit 2
//   SystemError              the outside world failed us            exit 1
//     ProtocolError          ... a peer sent what the protocol forbids
//   Interrupted              a stop signal ended a wait             exit 128+N
// Each reaches the user as one line naming what, and what to do; "internal
// error" is kept for bugs. Lookups that may legitimately find nothing return
// std::optional instead. Invariants are checked with always-on assertions
// (DLAUNCH_ASSERT), not exceptions.
#pragma once

#include <stdexcept>
#include <string>

namespace dlaunch::util {

// Something the user gave us (a flag, a variable, an expression, a file) is
// wrong. The message names the input, what was expected and what to do.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The command line itself is malformed (unknown flag, missing argument).
class UsageError : public InputError {
 public:
  using InputError::InputError;
};

// The outside world failed us: a syscall, a peer, a timeout.
class SystemError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A peer sent bytes the protocol forbids: garbage, a frame that fails its
// authentication, a field out of bounds, a message out of place. The
// receiver drops that peer; a launcher that gets it from node 0 counts node
// 0 as lost and decides alone.
class ProtocolError : public SystemError {
 public:
  using SystemError::SystemError;
};

// A stop signal (SIGINT, SIGTERM, SIGHUP, SIGQUIT) arrived while the
// launcher waited outside supervision (for the other nodes, for node 0).
class Interrupted : public std::runtime_error {
 public:
  explicit Interrupted(int signal_number);
  int signal;
};

// Builds a SystemError whose message ends with strerror(errno_value).
SystemError system_error(const std::string& what, int errno_value);

[[noreturn]] void assertion_failed(const char* expr, const char* file, int line);

}  // namespace dlaunch::util

#define DLAUNCH_ASSERT(expr) \
  ((expr) ? static_cast<void>(0) : ::dlaunch::util::assertion_failed(#expr, __FILE__, __LINE__))
