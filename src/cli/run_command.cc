#include "cli/run_command.h"

#include <fmt/format.h>

#include "launch/hand_off_check.h"
#include "launch/launch_config.h"
#include "launch/launcher.h"
#include "launch/run_options.h"
#include "launch/token_setting.h"
#include "util/process_secrets.h"

namespace dlaunch::cli {

int run_command(const CommandArgs& args) {
  util::Environment environment = util::Environment::from_process();
  // The token is in the snapshot above; nothing the launcher starts (the
  // gate's check, the workers) inherits it, and no process of the user can
  // read it from this one (util/process_secrets.h).
  util::hide_process_memory();
  util::scrub_environment_variable(launch::kTokenVariable);
  // The command line as typed, with PET_* fallbacks.
  auto options = launch::parse_run_options(args, environment);
  if (!options) return 0;  // --help
  // Checked values: flags, then PET_*, then the Slurm step, then defaults.
  launch::LaunchConfig config = launch::resolve_launch_config(*options, environment);
  // --check-only: what was checked is all; the same line whatever asks.
  if (options->check_only) {
    fmt::print("{}\n", launch::check_only_line(config));
    return 0;
  }
  // Rendezvous, supervision, report, with the coordinator this job needs.
  return launch::run_launcher(config, environment);
}

}  // namespace dlaunch::cli
