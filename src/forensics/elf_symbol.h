// Where a function of a running program's executable is in its memory.
//
// libelf (elfutils) reads the executable's symbol tables; the process's
// memory map gives where the kernel loaded it (a position-independent
// executable moves). Used to call CPython's faulthandler dump in a worker
// (forensics/python_dump.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <sys/types.h>

namespace dlaunch::forensics {

// The address of SYMBOL (a function of PID's executable, in .dynsym or
// .symtab) in PID's memory. nullopt, with PROBLEM saying why, when the
// executable cannot be read or has no such symbol.
std::optional<std::uintptr_t> symbol_address(pid_t pid, const std::string& symbol, std::string& problem);

}  // namespace dlaunch::forensics
