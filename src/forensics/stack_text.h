// Reading the stacks that tools print: elfutils' eu-stack (native frames of
// every thread) and CPython's faulthandler (Python frames of every thread).
//
// Their text comes from another process and may be cut short (a tool
// killed at its deadline), so these never throw: what does not parse is
// skipped, and every list is bounded (forensics/stack_sample.h).
#pragma once

#include <string_view>
#include <sys/types.h>
#include <vector>

#include "forensics/stack_sample.h"

namespace dlaunch::forensics {

// `eu-stack -m -p PID` output: "TID n:" then "#k  0xADDR FUNCTION - MODULE"
// lines, innermost first. The thread whose id is PID is the main thread.
std::vector<ThreadStack> parse_eu_stack(std::string_view text, pid_t pid);

// faulthandler's dump of all threads: "Thread 0x... (most recent call
// first):" or "Current thread 0x... ..." then `  File "F", line N in FUNC`
// lines, innermost first. The current thread is the main one: the dump is
// made on the process's first thread.
std::vector<ThreadStack> parse_faulthandler(std::string_view text);

}  // namespace dlaunch::forensics
