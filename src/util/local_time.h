// The wall-clock time as dlaunch prints it in reports and timelines.
#pragma once

#include <string>

namespace dlaunch::util {

// Now, in local time, ISO 8601 to the second: "2026-12-03T14:05:09".
std::string local_time_now();

}  // namespace dlaunch::util
