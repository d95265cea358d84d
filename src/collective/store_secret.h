// The store secret a launcher hands the worker it starts (the pre-start
// gate's check): on an inherited descriptor named by
// $DLAUNCH_STORE_SECRET_FD, never in the environment itself, which other
// processes of the same user can read.
#pragma once

#include <optional>
#include <string>

namespace dlaunch::collective {

// Reads the secret from the descriptor $DLAUNCH_STORE_SECRET_FD names,
// closes it and removes the variable; nullopt when it is not set. Throws
// InputError when the variable names no readable descriptor or the secret
// is empty or too long.
std::optional<std::string> take_store_secret();

}  // namespace dlaunch::collective
