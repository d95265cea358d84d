// The whole program behind main(): dispatch, and the only top-level catch.
#pragma once

namespace dlaunch {

// Runs "dlaunch SUBCOMMAND ..." and returns the exit code. Errors print
// one "dlaunch: error: ..." line; input errors exit 2, system errors 1.
int dlaunch_main(int argc, char** argv);

}  // namespace dlaunch
