// Signals by name: "SIGTERM" for 15 and back, for messages and for the
// signals a user names on a command line (--preempt-signal USR1).
#pragma once

#include <optional>
#include <string_view>

namespace dlaunch::util {

// "SIGTERM" for 15; "an unknown signal" for a number outside the common
// ones (SIGHUP to SIGXFSZ), so a message still reads as a sentence.
const char* signal_name(int signal);

// The number of a signal given as "USR1", "SIGUSR1" or "10"; nullopt when
// it names no signal signal_name() knows.
std::optional<int> signal_number(std::string_view text);

}  // namespace dlaunch::util
