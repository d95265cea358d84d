#include "launch/task_environment.h"

#include <fmt/format.h>

#include "launch/launch_config.h"
#include "slurm/slurm_context.h"
#include "slurm/tasks_per_node.h"
#include "util/error.h"
#include "util/strings.h"

namespace dlaunch::launch {
namespace {

int required_int(const util::Environment& environment, const char* name) {
  auto value = environment.get(name);
  if (!value)
    throw util::InputError(fmt::format("dlaunch exec runs inside an srun task, but {} is not set; start "
                                 "it with srun (dlaunch submit --launch task does)",
                                 name));
  return static_cast<int>(util::parse_int_in_range(*value, 0, 1 << 30, name));
}

// Every task computes the same port: Slurm's reservation, else the one
// derived from the job and step id (the task rank 0 binds it).
int task_port(const slurm::SlurmContext& context) {
  if (context.reserved_port) return *context.reserved_port;
  return derive_slurm_port(context.job_id, context.step_id, kDefaultPortRangeLow,
                           kDefaultPortRangeHigh);
}

}  // namespace

void add_task_environment(util::Environment& environment) {
  auto context = slurm::read_slurm_context(environment);
  if (!context)
    throw util::InputError("dlaunch exec runs inside an srun task, but SLURM_JOB_ID/SLURM_NODEID are "
                     "not set; start it with srun (dlaunch submit --launch task does)");
  const int rank = required_int(environment, "SLURM_PROCID");
  const int local_rank = required_int(environment, "SLURM_LOCALID");
  const int world_size = required_int(environment, "SLURM_NTASKS");
  const int node = context->node_id ? context->node_id->value : 0;
  auto layout = slurm::parse_tasks_per_node(
      environment.get("SLURM_STEP_TASKS_PER_NODE").value_or(environment.get("SLURM_TASKS_PER_NODE").value_or("")));
  if (node >= static_cast<int>(layout.size()))
    throw util::InputError(fmt::format("SLURM_NODEID={} but the tasks-per-node layout names only {} nodes",
                                 node, layout.size()));
  auto master = slurm::first_node(*context);
  if (!master)
    throw util::InputError("dlaunch exec: SLURM_STEP_NODELIST is not set, so the master node is unknown");

  const auto text = [](int value) { return std::to_string(value); };
  environment.set("RANK", text(rank));
  environment.set("LOCAL_RANK", text(local_rank));
  environment.set("WORLD_SIZE", text(world_size));
  environment.set("LOCAL_WORLD_SIZE", text(layout[static_cast<std::size_t>(node)]));
  environment.set("GROUP_RANK", text(node));
  environment.set("GROUP_WORLD_SIZE", text(static_cast<int>(layout.size())));
  environment.set("ROLE_RANK", text(rank));
  environment.set("ROLE_NAME", "default");
  environment.set("ROLE_WORLD_SIZE", text(world_size));
  environment.set("MASTER_ADDR", master->value);
  environment.set("MASTER_PORT", text(task_port(*context)));
  environment.set("TORCHELASTIC_RESTART_COUNT", environment.get("SLURM_RESTART_COUNT").value_or("0"));
  environment.set("TORCHELASTIC_MAX_RESTARTS", "0");
  environment.set("TORCHELASTIC_RUN_ID", context->job_id);
  environment.set("TORCHELASTIC_USE_AGENT_STORE", "False");
  environment.set_default("NCCL_ASYNC_ERROR_HANDLING", "1");
  environment.set_default("OMP_NUM_THREADS", "1");
  environment.set("NNODES", text(static_cast<int>(layout.size())));
  environment.set("NODE_RANK", text(node));
  environment.set("NPROC_PER_NODE", text(layout[static_cast<std::size_t>(node)]));
}

}  // namespace dlaunch::launch
