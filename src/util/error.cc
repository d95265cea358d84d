#include "util/error.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace dlaunch::util {

Interrupted::Interrupted(int signal_number)
    : std::runtime_error("stopped by signal " + std::to_string(signal_number)), signal(signal_number) {}

SystemError system_error(const std::string& what, int errno_value) {
  return SystemError(what + ": " + std::strerror(errno_value));
}

void assertion_failed(const char* expr, const char* file, int line) {
  std::fprintf(stderr, "dlaunch: internal error: assertion '%s' failed at %s:%d\n", expr, file,
               line);
  std::abort();
}

}  // namespace dlaunch::util
