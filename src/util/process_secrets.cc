#include "util/process_secrets.h"

#include <cstdlib>
#include <cstring>
#include <sys/prctl.h>

namespace dlaunch::util {

void hide_process_memory() {
  // Cannot fail for PR_SET_DUMPABLE 0; a kernel without it would leave the
  // process as readable as before, which the scrub below still narrows.
  ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

void scrub_environment_variable(const char* name) {
  char* value = std::getenv(name);
  if (value == nullptr) return;
  // explicit_bzero: a plain memset of memory nobody reads again may be
  // optimised away.
  ::explicit_bzero(value, std::strlen(value));
  ::unsetenv(name);
}

}  // namespace dlaunch::util
