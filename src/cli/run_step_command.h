// `dlaunch __run-step VERDICT_FILE GRACE_SECONDS [--foreground] -- STEP...`:
// internal, written into the job scripts of `dlaunch submit`, never typed by
// users. Runs the step (srun) until it ends, or until GRACE_SECONDS after
// the job's verdict appeared in VERDICT_FILE, and exits with the verdict's
// code (submit/step_guard.h says why).
#pragma once

#include "cli/command.h"

namespace dlaunch::cli {

int run_step_command(const CommandArgs& args);

}  // namespace dlaunch::cli
