#include "util/local_time.h"

#include <ctime>
#include <fmt/chrono.h>

namespace dlaunch::util {

std::string local_time_now() {
  return fmt::format("{:%Y-%m-%dT%H:%M:%S}", fmt::localtime(std::time(nullptr)));
}

}  // namespace dlaunch::util
