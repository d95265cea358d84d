#include "util/signal_names.h"

#include <csignal>
#include <string>

#include "util/strings.h"

namespace dlaunch::util {

namespace {

constexpr const char* kUnknownSignal = "an unknown signal";

}  // namespace

const char* signal_name(int signal) {
  switch (signal) {
    case SIGHUP: return "SIGHUP";
    case SIGINT: return "SIGINT";
    case SIGQUIT: return "SIGQUIT";
    case SIGILL: return "SIGILL";
    case SIGTRAP: return "SIGTRAP";
    case SIGABRT: return "SIGABRT";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGKILL: return "SIGKILL";
    case SIGUSR1: return "SIGUSR1";
    case SIGSEGV: return "SIGSEGV";
    case SIGUSR2: return "SIGUSR2";
    case SIGPIPE: return "SIGPIPE";
    case SIGALRM: return "SIGALRM";
    case SIGTERM: return "SIGTERM";
    case SIGXCPU: return "SIGXCPU";
    case SIGXFSZ: return "SIGXFSZ";
    default: return kUnknownSignal;
  }
}

std::optional<int> signal_number(std::string_view text) {
  if (auto number = parse_int(text)) {
    if (*number > 0 && *number < 32 && std::string_view(signal_name(static_cast<int>(*number))) != kUnknownSignal)
      return static_cast<int>(*number);
    return std::nullopt;
  }
  std::string name = to_upper(text);
  if (!name.starts_with("SIG")) name = std::string{"SIG"} + name;
  for (int signal = 1; signal < 32; ++signal) {
    if (name == signal_name(signal)) return signal;
  }
  return std::nullopt;
}

}  // namespace dlaunch::util
