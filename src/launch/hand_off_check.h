// Checking a `dlaunch run` command line before it leaves for the nodes.
//
// dlaunch submit and dlaunch ssh hand a dlaunch run command line to other
// machines, where a mistake in it used to show only once the job started:
// after its wait in the queue. Both check it here first, with the very code
// the nodes run (parse_run_options, then resolve_launch_config), in an
// environment that stands for node 0 of the job. What only a node can tell
// (its PATH's interpreter, its GPUs, a file on its disk) is left to the node
// (HostLookups::kElsewhere). `dlaunch run --check-only` is the same check on
// this machine, for sites that build command lines of their own.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "launch/launch_config.h"
#include "util/environment.h"

namespace dlaunch::launch {

// A command line on its way to the nodes.
struct HandOff {
  const char* command = "dlaunch submit";  // who hands it on, for the refusal
  const char* before = "sbatch";           // what is not called when it is refused
  // The words after `dlaunch run`: options, "--", PROGRAM [ARGS...].
  std::vector<std::string> run_args;
  // Stands for node 0's environment (slurm_step_stand_in for a batch job).
  util::Environment node_environment;
  // Where the option spelled NAME ("--prefix") came from, as the user gave
  // it ("prefix (from --prefix)", "--run-arg (from dlaunch.toml:3 [defaults])");
  // "" when it cannot say. Unset: the command line itself.
  std::function<std::string(std::string_view name)> origin_of;
  // --launch task: every task runs `dlaunch exec`, which parses the same
  // options and supervises nothing, so only its parser is asked.
  bool exec = false;
};

// Parses and resolves HAND_OFF's arguments as node 0 will. Throws the
// error dlaunch run would give there (UsageError, InputError: the same exit
// code), its message followed by the setting it came from where that can
// be found, and that it was checked as the nodes would read it, before
// HAND_OFF.before was called. Returns the resolved configuration (empty for
// exec).
LaunchConfig check_hand_off(const HandOff& hand_off);

// The environment of node 0 in a Slurm step of NODES nodes (training nodes
// and spares) with GPUS_PER_NODE GPUs on each (0: none asked for), as srun
// gives it to the step's first task: only the variables resolve_launch_config
// reads (job and step id, node count and id, node list, GPUs), so that what
// depends on the step (--nnodes against the step's size, spares, --requeue's
// SLURM_JOB_ID, a node rank's range) is judged as on the nodes. The job id
// and host names are stand-ins; nothing is derived from them.
util::Environment slurm_step_stand_in(int nodes, int gpus_per_node);

// The one line `dlaunch run --check-only` prints for CONFIG: that the
// options are valid, and the nodes, workers and program they resolve to.
std::string check_only_line(const LaunchConfig& config);

}  // namespace dlaunch::launch
