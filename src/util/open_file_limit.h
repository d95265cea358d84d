// The soft limit on open files (RLIMIT_NOFILE), raised for node 0's
// rendezvous service and put back for the workers.
//
// Node 0 holds one descriptor per connection to its rendezvous port, and a
// stranger can open many. Distributions often start processes with a soft
// limit of 1024 under a far higher hard limit; raising the soft limit to the
// hard one (as servers commonly do) lets the service hold thousands of
// unproven connections without turning away a launcher. The workers get the
// limit they were started with, as with torchrun.
#pragma once

#include <cstddef>

namespace dlaunch::util {

// Raises the soft limit to the hard limit, at most CAP. Returns the soft
// limit now in force. Call while the process has one thread.
std::size_t raise_open_file_limit(std::size_t cap);

// In a freshly forked child, before exec: the soft limit as it was before
// raise_open_file_limit() (nothing when it was never raised).
// Async-signal-safe.
void restore_open_file_limit_in_child();

}  // namespace dlaunch::util
