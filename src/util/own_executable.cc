#include "util/own_executable.h"

#include <filesystem>
#include <system_error>

#include "util/error.h"

namespace dlaunch::util {

std::string own_executable() {
  std::error_code error;
  auto path = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) throw system_error("cannot find this program's own path in /proc/self/exe", error.value());
  return path.string();
}

}  // namespace dlaunch::util
