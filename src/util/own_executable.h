// The path of the running program's own executable, for what runs it (or
// a program installed beside it) again: job scripts, remote commands.
#pragma once

#include <string>

namespace dlaunch::util {

// The absolute path /proc/self/exe names. Throws SystemError naming
// /proc/self/exe and why it could not be read.
std::string own_executable();

}  // namespace dlaunch::util
