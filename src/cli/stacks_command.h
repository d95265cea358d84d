// `dlaunch stacks JOB`: where is every rank of a running job now? Prints
// the ranks grouped by stack (outliers first) without stopping anything.
#pragma once

#include "cli/command.h"

namespace dlaunch::cli {

// ARGS excludes "dlaunch stacks". Returns 0 once the report is printed, 1
// when some ranks could not be captured; throws UsageError, InputError
// (no such job, no rendezvous file, a bad token file) or SystemError (the
// job does not answer).
int stacks_command(const CommandArgs& args);
util::CommandLineSpec stacks_command_line();

}  // namespace dlaunch::cli
