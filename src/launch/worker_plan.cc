#include "launch/worker_plan.h"

#include <algorithm>
#include <fmt/format.h>

#include "launch/token_setting.h"
#include "util/error.h"
#include "util/strings.h"

namespace dlaunch::launch {
namespace {

// How often Slurm has started this batch job again (scontrol requeue,
// preemption, node failure): SLURM_RESTART_COUNT, 0 when unset.
int slurm_restart_count(const util::Environment& base) {
  auto value = base.get("SLURM_RESTART_COUNT");
  if (!value) return 0;
  auto count = util::parse_int(util::trim(*value));
  if (!count || *count < 0 || *count > 1'000'000)
    throw util::InputError(fmt::format(
        "SLURM_RESTART_COUNT must be a whole number from 0 (how often Slurm requeued the job), got "
        "'{}'. Slurm sets it itself: unset it, or fix the value where it is exported",
        *value));
  return static_cast<int>(*count);
}

// The node rank of SLOT's launcher in WORLD: the rendezvous gives it each round.
int node_rank_in(int slot, const rendezvous::World& world) {
  auto rank = world.node_rank_of(slot);
  DLAUNCH_ASSERT(rank.has_value());  // a launcher on standby plans no workers
  return *rank;
}

// The variables torchrun (torch.distributed.elastic) sets for each worker,
// plus NNODES / NODE_RANK / NPROC_PER_NODE that shell-workflow scripts read.
void set_torchrun_variables(util::Environment& environment, const LaunchConfig& config,
                            const rendezvous::World& world, int node_rank, int local_rank, int global_rank,
                            int restart_count) {
  const int local_world_size = world.nproc_per_node[static_cast<std::size_t>(node_rank)];
  const auto text = [](int value) { return std::to_string(value); };
  environment.set("LOCAL_RANK", text(local_rank));
  environment.set("RANK", text(global_rank));
  environment.set("GROUP_RANK", text(node_rank));
  environment.set("ROLE_RANK", text(global_rank));
  environment.set("ROLE_NAME", config.role);
  environment.set("LOCAL_WORLD_SIZE", text(local_world_size));
  environment.set("WORLD_SIZE", text(world.world_size()));
  environment.set("GROUP_WORLD_SIZE", text(world.nnodes()));
  environment.set("ROLE_WORLD_SIZE", text(world.world_size()));
  environment.set("MASTER_ADDR", world.worker_master_addr);
  environment.set("MASTER_PORT", text(world.worker_master_port));
  environment.set("TORCHELASTIC_RESTART_COUNT", text(restart_count));
  environment.set("TORCHELASTIC_MAX_RESTARTS", text(config.job.max_restarts));
  environment.set("TORCHELASTIC_RUN_ID", world.run_id);
  // Worker rank 0 hosts the process-group store itself on MASTER_PORT.
  environment.set("TORCHELASTIC_USE_AGENT_STORE", "False");
  environment.set_default("NCCL_ASYNC_ERROR_HANDLING", "1");
  environment.set("NNODES", text(world.nnodes()));
  environment.set("NODE_RANK", text(node_rank));
  environment.set("NPROC_PER_NODE", text(local_world_size));
}

// The interface node 0 chose for this host by reachability, unless the
// user set the variables: NCCL takes "=NAME" as an exact name (a bare name
// is a prefix, and eth1 would match eth10 too).
void set_network_variables(util::Environment& environment, const rendezvous::World& world, int launcher_slot) {
  auto slot = static_cast<std::size_t>(launcher_slot);
  if (launcher_slot < 0 || slot >= world.ifnames.size() || world.ifnames[slot].empty()) return;
  environment.set_default("GLOO_SOCKET_IFNAME", world.ifnames[slot]);
  environment.set_default("NCCL_SOCKET_IFNAME", "=" + world.ifnames[slot]);
}

void route_streams(WorkerSpec& worker, const LaunchConfig& config) {
  unsigned redirected = config.redirects.mask_for(worker.local_rank);
  unsigned teed = config.tee.mask_for(worker.local_rank);
  // --log-dir alone files both streams and still shows them.
  if (config.log_dir && redirected == kNoStream && teed == kNoStream) teed = kBothStreams;
  unsigned filed = redirected | teed;
  if (filed & kStdout) worker.stdout_file = worker.log_folder + "/stdout.log";
  if (filed & kStderr) worker.stderr_file = worker.log_folder + "/stderr.log";
  bool shown = !config.local_ranks_filter ||
               std::find(config.local_ranks_filter->begin(), config.local_ranks_filter->end(),
                         worker.local_rank) != config.local_ranks_filter->end();
  // As torchrun: a stream both redirected and teed is teed (torchrun
  // redirects it to its file, then tails the file to the console).
  worker.stdout_to_console = shown && (!(redirected & kStdout) || (teed & kStdout));
  worker.stderr_to_console = shown && (!(redirected & kStderr) || (teed & kStderr));
}

}  // namespace

std::string expand_prefix(const std::string& templ, int rank, int local_rank, int node_rank,
                          const std::string& host, const std::string& role) {
  try {
    return fmt::format(fmt::runtime(templ), fmt::arg("rank", rank),
                       fmt::arg("local_rank", local_rank), fmt::arg("node_rank", node_rank),
                       fmt::arg("host", host), fmt::arg("role", role));
  } catch (const fmt::format_error& error) {
    throw util::InputError(fmt::format(
        "--prefix '{}' is not a valid template ({}); use fields such as {{rank}} and {{host}}",
        templ, error.what()));
  }
}

WorkerPlan plan_workers(const LaunchConfig& config, const rendezvous::World& world, int slot,
                        const util::Environment& base, const std::string& log_root, const std::string& host) {
  WorkerPlan plan;
  const int node_rank = node_rank_in(slot, world);
  const int nproc = world.nproc_per_node[static_cast<std::size_t>(node_rank)];
  const int offset = world.rank_offset(node_rank);

  // Workers resume from their checkpoint when this is above 0: it counts the
  // launcher's own restarts and the times Slurm started the job again.
  const int restart_count = slurm_restart_count(base) + world.round;
  util::Environment shared = base;
  // The rendezvous secret is the launchers' business, not the workers'.
  shared.erase(kTokenVariable);
  if (nproc > 1 && !base.has("OMP_NUM_THREADS")) {
    shared.set("OMP_NUM_THREADS", "1");
    plan.notices.push_back(
        "OMP_NUM_THREADS set to 1 for each worker to avoid overloading the node; set it yourself "
        "to tune.");
  }
  for (int local_rank = 0; local_rank < nproc; ++local_rank) {
    WorkerSpec worker;
    worker.local_rank = local_rank;
    worker.global_rank = offset + local_rank;
    worker.argv = config.command;
    worker.environment = shared;
    set_torchrun_variables(worker.environment, config, world, node_rank, local_rank, worker.global_rank,
                           restart_count);
    set_network_variables(worker.environment, world, slot);
    worker.log_folder =
        fmt::format("{}/attempt_{}/rank{}", log_root, world.round, worker.global_rank);
    worker.error_file = worker.log_folder + "/error.json";
    worker.environment.set("TORCHELASTIC_ERROR_FILE", worker.error_file);
    worker.prefix = expand_prefix(config.prefix_template, worker.global_rank, local_rank, node_rank,
                                  host, config.role);
    route_streams(worker, config);
    plan.workers.push_back(std::move(worker));
  }
  return plan;
}

}  // namespace dlaunch::launch
