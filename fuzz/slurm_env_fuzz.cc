// slurm_env_fuzz: everything that reads a Slurm step's environment.
//
// The input is an environment, one KEY=VALUE a line (lines without '=' are
// skipped). It goes through the Slurm context (slurm/slurm_context.h), the
// device-list count, SLURM_TASKS_PER_NODE (slurm/tasks_per_node.h), `dlaunch
// run`'s option fallbacks and resolution (parse_run_options with PET_*
// variables, resolve_launch_config) and `dlaunch exec`'s task environment.
// Checks that the only failures are InputError and UsageError (a UsageError
// is an InputError), and that what resolves is in range: node rank below
// the node count, at least one worker, a port in 1..65535.
//
// PET_RDZV_TOKEN_FILE is dropped: it names a file to read (possibly a pipe
// that never ends), which is I/O, not parsing.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "launch/run_options.h"
#include "launch/launch_config.h"
#include "launch/launch_site.h"
#include "launch/skypilot_context.h"
#include "launch/task_environment.h"
#include "slurm/slurm_context.h"
#include "slurm/tasks_per_node.h"
#include "util/environment.h"
#include "util/error.h"

namespace {

using namespace dlaunch;

void check(bool condition, const char* what) {
  if (condition) return;
  std::fprintf(stderr, "slurm_env_fuzz: invariant broken: %s\n", what);
  std::abort();
}

util::Environment environment_of(std::string_view text) {
  util::Environment environment;
  while (!text.empty()) {
    std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    std::size_t equals = line.find('=');
    if (equals == std::string_view::npos || equals == 0) continue;
    environment.set(std::string(line.substr(0, equals)), std::string(line.substr(equals + 1)));
  }
  environment.erase("PET_RDZV_TOKEN_FILE");
  return environment;
}

void fuzz_slurm_context(const util::Environment& environment) {
  try {
    auto context = slurm::read_slurm_context(environment);
    if (!context) return;
    if (context->num_nodes) check(context->num_nodes->value >= 1, "SLURM node count below 1");
    if (context->node_id) check(context->node_id->value >= 0, "negative SLURM_NODEID");
    if (context->gpus_on_node) check(context->gpus_on_node->value >= 0, "negative GPU count");
    if (context->reserved_port)
      check(*context->reserved_port >= 1 && *context->reserved_port <= 65535,
            "reserved port out of range");
    if (context->step_id) check(*context->step_id <= slurm::kMaxNormalStepId, "one of Slurm's own steps as an srun step");
    if (auto first = slurm::first_node(*context)) check(!first->value.empty(), "empty first node");
  } catch (const util::InputError&) {
  }
}

void fuzz_outside_step(const util::Environment& environment) {
  try {
    if (auto outside = slurm::outside_step_of_multinode_job(environment))
      check(outside->job_nodes.value > 1 && !outside->why.empty(), "outside a step of a job of one node");
  } catch (const util::InputError&) {
  }
}

void fuzz_skypilot(const util::Environment& environment) {
  try {
    if (auto context = launch::read_skypilot_context(environment)) {
      check(context->node_ips.size() == static_cast<std::size_t>(context->num_nodes.value), "IPs not one a node");
      check(context->node_rank.value >= 0 && context->node_rank.value < context->num_nodes.value,
            "SkyPilot node rank out of range");
      check(!context->head_ip.value.empty(), "empty SkyPilot head address");
    }
  } catch (const util::InputError&) {
  }
}

void fuzz_tasks_per_node(const util::Environment& environment) {
  for (const char* name : {"SLURM_TASKS_PER_NODE", "SLURM_STEP_TASKS_PER_NODE"}) {
    auto text = environment.get(name);
    if (!text) continue;
    try {
      for (int count : slurm::parse_tasks_per_node(*text)) check(count >= 0, "negative task count");
    } catch (const util::InputError&) {
    }
  }
  for (const char* name : {"CUDA_VISIBLE_DEVICES", "SLURM_STEP_GPUS", "SLURM_JOB_GPUS"}) {
    if (auto list = environment.get(name))
      check(slurm::count_device_list(*list) >= 0, "negative device count");
  }
}

bool has_pet_variables(const util::Environment& environment) {
  for (const auto& [name, value] : environment.variables())
    if (name.starts_with("PET_")) return true;
  return false;
}

void fuzz_launch_config(const util::Environment& environment) {
  const std::vector<std::string> args{"train.py", "--lr", "0.1"};
  try {
    // Without PET_* variables parse_run_options can only return ARGS as the
    // command; building its CLI11 parser would take most of the run's time.
    launch::RunOptions options;
    options.command = args;
    if (has_pet_variables(environment)) {
      auto parsed = launch::parse_run_options(args, environment);
      check(parsed.has_value(), "parse_run_options printed help for a plain command line");
      options = *parsed;
    }
    launch::LaunchConfig config = launch::resolve_launch_config(options, environment);
    const launch::Topology& topology = config.topology;
    check(topology.nnodes.value >= 1, "fewer than one node");
    check(topology.node_rank.value >= 0 && topology.node_rank.value < topology.nnodes.value,
          "node rank out of range");
    check(topology.nproc_per_node.value >= 1, "fewer than one worker per node");
    check(topology.launchers() <= launch::kMostLaunchers, "more launchers than a job takes");
    if (topology.master_port)
      check(topology.master_port->value >= 1 && topology.master_port->value <= 65535,
            "port out of range");
    check(!config.command.empty(), "no worker command");
  } catch (const util::InputError&) {  // UsageError included
  }
}

void fuzz_task_environment(const util::Environment& environment) {
  util::Environment task = environment;
  try {
    launch::add_task_environment(task);
    check(task.has("RANK") && task.has("MASTER_ADDR") && task.has("MASTER_PORT"),
          "task environment incomplete");
  } catch (const util::InputError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  util::Environment environment =
      environment_of(std::string_view(reinterpret_cast<const char*>(data), size));
  fuzz_slurm_context(environment);
  fuzz_outside_step(environment);
  fuzz_skypilot(environment);
  fuzz_tasks_per_node(environment);
  fuzz_launch_config(environment);
  fuzz_task_environment(environment);
  return 0;
}
