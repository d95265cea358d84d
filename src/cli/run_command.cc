#include "cli/run_command.h"

#include "cli/run_options.h"
#include "launch/launch_config.h"
#include "launch/launcher.h"

namespace dlaunch {

int run_command(const CommandArgs& args) {
  Environment environment = Environment::from_process();
  // The command line as typed, with PET_* fallbacks.
  auto options = parse_run_options(args, environment);
  if (!options) return 0;  // --help
  // Checked values: flags, then PET_*, then the Slurm step, then defaults.
  LaunchConfig config = resolve_launch_config(*options, environment);
  // Rendezvous, supervision, report.
  return run_launcher(config, environment);
}

}  // namespace dlaunch
