#include "util/exit_codes.h"

#include <fmt/format.h>
#include <sys/wait.h>

#include "util/signal_names.h"

namespace dlaunch::util {

namespace {

// Linux numbers its signals 1 to 64 (SIGRTMAX); a shell adds 128 to them.
constexpr int kLastSignal = 64;

}  // namespace

std::optional<int> signal_of_exit_code(int code) {
  int signal = code - kExitSignalBase;
  if (signal < 1 || signal > kLastSignal) return std::nullopt;
  return signal;
}

int exit_code_of_wait_status(int wait_status) {
  if (WIFSIGNALED(wait_status)) return exit_code_of_signal(WTERMSIG(wait_status));
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  return -1;
}

int signal_of_wait_status(int wait_status) { return WIFSIGNALED(wait_status) ? WTERMSIG(wait_status) : 0; }

std::string describe_exit_code(int code) {
  auto signal = signal_of_exit_code(code);
  if (!signal) return fmt::format("exit code {}", code);
  if (!signal_number(signal_name(*signal))) return fmt::format("exit code {} (signal {})", code, *signal);
  return fmt::format("exit code {} ({})", code, signal_name(*signal));
}

}  // namespace dlaunch::util
