// The communication check: every rank proves it can reach every other.
#pragma once

#include <string>

#include "check/check_options.h"
#include "collective/communicator.h"

namespace dlaunch::check {

// All-reduces the ranks (the sum must be n(n-1)/2), broadcasts a value from
// rank 0 and passes a barrier. Each rank prints its verdict line; rank 0
// prints the summary banner. Returns 0 when every rank passed, else 1.
int run_correctness_check(collective::Communicator& communicator,
                          const collective::WorkerIdentity& identity, const CheckOptions& options);

// "✓"/"✗" on a UTF-8 terminal, "OK"/"FAIL" otherwise (from LC_ALL, LC_CTYPE, LANG).
bool terminal_is_utf8();

}  // namespace dlaunch::check
