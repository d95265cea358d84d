// The whole program behind main(): dispatch, and the only top-level catch.
#pragma once

#include <functional>
#include <span>

#include "cli/command.h"

namespace dlaunch::cli {

// Runs "dlaunch SUBCOMMAND ..." and returns the exit code. Errors print
// one "dlaunch: error: ..." line; input errors exit 2, system errors 1.
// Before it returns, the console gets what it still holds (waiting at most
// kConsoleExitWait for a stalled one: launch/console_report.h).
int dlaunch_main(int argc, char** argv);

// Runs BODY with the top-level error handling of dlaunch_main (one
// "dlaunch: error: ..." line, exit 2 for input errors, 1 for the rest), for
// the other executables built from this library, and the same final
// flush of the console.
int run_guarded(const std::function<int()>& body);

// The command table dlaunch_main dispatches from (for tests that check
// every command keeps the conventions of util/command_line.h).
std::span<const Command> command_table();

}  // namespace dlaunch::cli
