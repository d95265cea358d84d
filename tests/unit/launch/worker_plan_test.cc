// The environment contract: what torchrun gives each worker.
#include "launch/worker_plan.h"

#include <gtest/gtest.h>
#include <map>

#include "util/error.h"

namespace dlaunch::launch {
namespace {

LaunchConfig two_node_config(int node_rank) {
  LaunchConfig config;
  config.topology.nnodes = {2, "test"};
  config.topology.node_rank = {node_rank, "test"};
  config.topology.nproc_per_node = {3, "test"};
  config.command = {"/bin/true"};
  config.job.max_restarts = 2;
  return config;
}

rendezvous::World uneven_world() {
  rendezvous::World world;
  world.round = 1;
  world.nproc_per_node = {2, 3};
  world.worker_master_addr = std::string("a");  // GCC 12 -Wrestrict false positive on = "a"
  world.worker_master_port = 4444;
  world.run_id = "job7";
  return world;
}

// An environment of one variable.
util::Environment only(const std::string& name, const std::string& value) {
  return util::Environment(std::map<std::string, std::string>{{name, value}});
}

std::string get(const WorkerSpec& worker, const char* name) {
  return worker.environment.get(name).value_or("<unset>");
}

TEST(WorkerPlan, RanksArePrefixSumsOverUnevenNodes) {
  auto plan = plan_workers(two_node_config(1), uneven_world(), 1, util::Environment(), "/logs", "b");
  ASSERT_EQ(plan.workers.size(), 3u);
  for (int local = 0; local < 3; ++local) {
    const WorkerSpec& worker = plan.workers[static_cast<std::size_t>(local)];
    EXPECT_EQ(worker.global_rank, 2 + local);
    EXPECT_EQ(get(worker, "RANK"), std::to_string(2 + local));
    EXPECT_EQ(get(worker, "LOCAL_RANK"), std::to_string(local));
    EXPECT_EQ(get(worker, "ROLE_RANK"), std::to_string(2 + local));
  }
}

TEST(WorkerPlan, EveryTorchrunVariableIsSet) {
  auto plan = plan_workers(two_node_config(1), uneven_world(), 1, util::Environment(), "/logs", "b");
  const WorkerSpec& worker = plan.workers[0];
  EXPECT_EQ(get(worker, "GROUP_RANK"), "1");
  EXPECT_EQ(get(worker, "ROLE_NAME"), "default");
  EXPECT_EQ(get(worker, "LOCAL_WORLD_SIZE"), "3");
  EXPECT_EQ(get(worker, "WORLD_SIZE"), "5");
  EXPECT_EQ(get(worker, "GROUP_WORLD_SIZE"), "2");
  EXPECT_EQ(get(worker, "ROLE_WORLD_SIZE"), "5");
  EXPECT_EQ(get(worker, "MASTER_ADDR"), "a");
  EXPECT_EQ(get(worker, "MASTER_PORT"), "4444");
  EXPECT_EQ(get(worker, "TORCHELASTIC_RESTART_COUNT"), "1");
  EXPECT_EQ(get(worker, "TORCHELASTIC_MAX_RESTARTS"), "2");
  EXPECT_EQ(get(worker, "TORCHELASTIC_RUN_ID"), "job7");
  EXPECT_EQ(get(worker, "TORCHELASTIC_USE_AGENT_STORE"), "False");
  EXPECT_EQ(get(worker, "TORCHELASTIC_ERROR_FILE"), "/logs/attempt_1/rank2/error.json");
  EXPECT_EQ(get(worker, "NCCL_ASYNC_ERROR_HANDLING"), "1");
  EXPECT_EQ(get(worker, "NNODES"), "2");
  EXPECT_EQ(get(worker, "NODE_RANK"), "1");
  EXPECT_EQ(get(worker, "NPROC_PER_NODE"), "3");
}

TEST(WorkerPlan, OmpNumThreadsDefaultsToOneWithANotice) {
  auto plan = plan_workers(two_node_config(0), uneven_world(), 0, util::Environment(), "/logs", "a");
  EXPECT_EQ(get(plan.workers[0], "OMP_NUM_THREADS"), "1");
  EXPECT_EQ(plan.notices.size(), 1u);
  util::Environment user({{"OMP_NUM_THREADS", "8"}, {"NCCL_ASYNC_ERROR_HANDLING", "0"}});
  auto kept = plan_workers(two_node_config(0), uneven_world(), 0, user, "/logs", "a");
  EXPECT_EQ(get(kept.workers[0], "OMP_NUM_THREADS"), "8");
  EXPECT_EQ(get(kept.workers[0], "NCCL_ASYNC_ERROR_HANDLING"), "0");
  EXPECT_TRUE(kept.notices.empty());
}

TEST(WorkerPlan, SingleWorkerGetsNoOmpOverride) {
  rendezvous::World world = uneven_world();
  world.nproc_per_node = {1, 1};
  auto plan = plan_workers(two_node_config(0), world, 0, util::Environment(), "/logs", "a");
  EXPECT_EQ(get(plan.workers[0], "OMP_NUM_THREADS"), "<unset>");
}

TEST(WorkerPlan, ParentEnvironmentIsInherited) {
  util::Environment parent({{"PATH", "/x"}, {"RANK", "99"}});
  auto plan = plan_workers(two_node_config(0), uneven_world(), 0, parent, "/logs", "a");
  EXPECT_EQ(get(plan.workers[1], "PATH"), "/x");
  EXPECT_EQ(get(plan.workers[1], "RANK"), "1");  // ours wins over an inherited one
}

TEST(WorkerPlan, RestartCountAddsSlurmRequeuesToTheLaunchersRestarts) {
  // uneven_world() is the launcher's round 1; Slurm started the job twice more.
  util::Environment requeued = only("SLURM_RESTART_COUNT", "2");
  auto plan = plan_workers(two_node_config(0), uneven_world(), 0, requeued, "/logs", "a");
  EXPECT_EQ(get(plan.workers[0], "TORCHELASTIC_RESTART_COUNT"), "3");
  EXPECT_EQ(get(plan.workers[1], "TORCHELASTIC_RESTART_COUNT"), "3");
  EXPECT_EQ(get(plan.workers[0], "SLURM_RESTART_COUNT"), "2");  // passed through as well
  // The log folder still counts the launcher's rounds only (the job script
  // gives each Slurm restart a --log-dir of its own).
  EXPECT_EQ(plan.workers[0].error_file, "/logs/attempt_1/rank0/error.json");

  rendezvous::World first = uneven_world();
  first.round = 0;
  util::Environment once = only("SLURM_RESTART_COUNT", "1");
  plan = plan_workers(two_node_config(0), first, 0, once, "/logs", "a");
  EXPECT_EQ(get(plan.workers[0], "TORCHELASTIC_RESTART_COUNT"), "1");
  plan = plan_workers(two_node_config(0), first, 0, only("SLURM_RESTART_COUNT", "0"), "/logs", "a");
  EXPECT_EQ(get(plan.workers[0], "TORCHELASTIC_RESTART_COUNT"), "0");
  plan = plan_workers(two_node_config(0), first, 0, util::Environment(), "/logs", "a");
  EXPECT_EQ(get(plan.workers[0], "TORCHELASTIC_RESTART_COUNT"), "0");
}

TEST(WorkerPlan, BadSlurmRestartCountIsNamed) {
  for (const char* bad : {"x", "-1", "1.5", "2x", "99999999999"}) {
    try {
      plan_workers(two_node_config(0), uneven_world(), 0, only("SLURM_RESTART_COUNT", bad),
                   "/logs", "a");
      ADD_FAILURE() << "accepted SLURM_RESTART_COUNT=" << bad;
    } catch (const util::InputError& error) {
      std::string message = error.what();
      EXPECT_NE(message.find("SLURM_RESTART_COUNT"), std::string::npos) << message;
      EXPECT_NE(message.find(std::string("'") + bad + "'"), std::string::npos) << message;
    }
  }
}

TEST(WorkerPlan, WorkersDoNotGetTheRendezvousSecret) {
  util::Environment parent({{"DLAUNCH_RDZV_TOKEN", std::string(64, 'a')}, {"PATH", "/x"}});
  auto plan = plan_workers(two_node_config(0), uneven_world(), 0, parent, "/logs", "a");
  for (const auto& worker : plan.workers) {
    EXPECT_EQ(get(worker, "DLAUNCH_RDZV_TOKEN"), "<unset>");
    EXPECT_EQ(get(worker, "PATH"), "/x");
  }
}

TEST(WorkerPlan, PrefixTemplate) {
  auto config = two_node_config(1);
  auto plan = plan_workers(config, uneven_world(), 1, util::Environment(), "/logs", "b");
  EXPECT_EQ(plan.workers[2].prefix, "[rank4]:");
  config.prefix_template = "{host}:{node_rank}:{local_rank}:{role}|";
  plan = plan_workers(config, uneven_world(), 1, util::Environment(), "/logs", "b");
  EXPECT_EQ(plan.workers[2].prefix, "b:1:2:default|");
  config.prefix_template = "{nope}";
  EXPECT_THROW(plan_workers(config, uneven_world(), 1, util::Environment(), "/logs", "b"), util::InputError);
}

TEST(WorkerPlan, StreamRouting) {
  auto config = two_node_config(1);
  auto plan = plan_workers(config, uneven_world(), 1, util::Environment(), "/logs", "b");
  EXPECT_FALSE(plan.workers[0].stdout_file);  // no log dir, no -r/-t: console only
  EXPECT_TRUE(plan.workers[0].stdout_to_console);

  config.log_dir = "/logs";  // --log-dir alone: files and console
  plan = plan_workers(config, uneven_world(), 1, util::Environment(), "/logs", "b");
  EXPECT_EQ(plan.workers[0].stdout_file, "/logs/attempt_1/rank2/stdout.log");
  EXPECT_EQ(plan.workers[0].stderr_file, "/logs/attempt_1/rank2/stderr.log");
  EXPECT_TRUE(plan.workers[0].stderr_to_console);

  config.redirects = parse_stream_routing(Setting{"0:1", "-r"});  // rank 0's stdout: file only
  plan = plan_workers(config, uneven_world(), 1, util::Environment(), "/logs", "b");
  EXPECT_FALSE(plan.workers[0].stdout_to_console);
  EXPECT_TRUE(plan.workers[0].stderr_to_console);
  EXPECT_TRUE(plan.workers[0].stdout_file);
  EXPECT_FALSE(plan.workers[0].stderr_file);

  config.redirects = {};
  config.local_ranks_filter = std::vector<int>{1};
  plan = plan_workers(config, uneven_world(), 1, util::Environment(), "/logs", "b");
  EXPECT_FALSE(plan.workers[0].stdout_to_console);
  EXPECT_TRUE(plan.workers[1].stdout_to_console);
  EXPECT_TRUE(plan.workers[0].stdout_file);  // the filter only affects the console
}

TEST(WorkerPlan, AStreamBothRedirectedAndTeedIsTeedAsUnderTorchrun) {
  auto config = two_node_config(1);
  config.redirects = parse_stream_routing(Setting{"3", "-r"});
  config.tee = parse_stream_routing(Setting{"1", "-t"});
  auto plan = plan_workers(config, uneven_world(), 1, util::Environment(), "/logs", "b");
  EXPECT_TRUE(plan.workers[0].stdout_to_console) << "teed: file and console";
  EXPECT_TRUE(plan.workers[0].stdout_file);
  EXPECT_FALSE(plan.workers[0].stderr_to_console) << "only redirected: file only";
  EXPECT_TRUE(plan.workers[0].stderr_file);
}

}  // namespace
}  // namespace dlaunch::launch
