// dlaunch env: the topology dlaunch run would use here, each value with its
// source, read from this process's environment (set by each test).
#include "cli/env_command.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "../test_support/text.h"
#include "util/environment.h"
#include "util/error.h"

namespace dlaunch::cli {
namespace {

using test_support::contains;

// While it lives, no SLURM_*, PET_*, DLAUNCH_*, NCCL_*, GLOO_* or SKYPILOT_* variable of
// the test's own environment is set, only VARIABLES; everything is put back after.
class ProcessEnvironment {
 public:
  explicit ProcessEnvironment(const std::map<std::string, std::string>& variables) {
    util::Environment current = util::Environment::from_process();
    for (const auto& [name, value] : current.variables()) {
      if (name.starts_with("SLURM_") || name.starts_with("PET_") || name.starts_with("DLAUNCH_") ||
          name.starts_with("NCCL_") || name.starts_with("GLOO_") || name.starts_with("SKYPILOT_")) {
        saved_.emplace(name, value);
        ::unsetenv(name.c_str());
      }
    }
    for (const auto& [name, value] : variables) {
      if (!saved_.count(name)) saved_.emplace(name, std::nullopt);
      ::setenv(name.c_str(), value.c_str(), 1);
    }
  }
  ~ProcessEnvironment() {
    for (const auto& [name, value] : saved_) {
      if (value) ::setenv(name.c_str(), value->c_str(), 1);
      else ::unsetenv(name.c_str());
    }
  }

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

std::string env_output(const CommandArgs& args) {
  ::testing::internal::CaptureStdout();
  EXPECT_EQ(env_command(args), 0);
  return ::testing::internal::GetCapturedStdout();
}

nlohmann::json env_json(CommandArgs args) {
  args.insert(args.begin(), "--json");
  return nlohmann::json::parse(env_output(args));
}

TEST(EnvCommand, FlagsAndTheirSourcesForANodeOfSeveral) {
  ProcessEnvironment environment({});
  auto document = env_json({"--nnodes", "2", "--node-rank", "1", "--nproc-per-node", "3",
                            "--master-addr", "head", "--master-port", "29400", "./train", "--lr", "1"});
  EXPECT_EQ(document["nnodes"]["value"], 2);
  EXPECT_EQ(document["nnodes"]["source"], "--nnodes");
  EXPECT_EQ(document["node_rank"]["value"], 1);
  EXPECT_EQ(document["nproc_per_node"]["value"], 3);
  EXPECT_EQ(document["master_addr"]["value"], "head");
  EXPECT_EQ(document["master_port"]["value"], 29400);
  EXPECT_EQ(document["rendezvous"]["value"], "hosted by node 0");
  EXPECT_EQ(document["in_slurm"]["value"], false);
  EXPECT_TRUE(document["rdzv_token"]["value"].is_null());
  EXPECT_TRUE(contains(document["rdzv_token"]["source"].get<std::string>(), "none: any launcher"));
  EXPECT_EQ(document["heartbeat_timeout"]["value"], 30);
  EXPECT_EQ(document["command"], (nlohmann::json{"./train", "--lr", "1"}));
}

TEST(EnvCommand, TheTokenIsNeverShown) {
  const std::map<std::string, std::string> token{{"DLAUNCH_RDZV_TOKEN", "0123456789abcdef0123456789abcdef"}};
  ProcessEnvironment environment(token);
  std::string text = env_output({"--nnodes", "2", "--node-rank", "1", "--master-addr", "head"});
  EXPECT_FALSE(contains(text, "0123456789abcdef")) << text;
  EXPECT_TRUE(contains(text, "set (not shown)")) << text;
  EXPECT_TRUE(contains(text, "(DLAUNCH_RDZV_TOKEN)")) << text;
}

TEST(EnvCommand, ASingleNodeHasNoRendezvous) {
  ProcessEnvironment environment({});
  auto document = env_json({"--nproc-per-node", "2"});
  EXPECT_EQ(document["nnodes"]["value"], 1);
  EXPECT_EQ(document["rendezvous"]["value"], "none (single node)");
  EXPECT_FALSE(document.contains("rdzv_token"));
  EXPECT_FALSE(document.contains("heartbeat_timeout"));
  EXPECT_FALSE(document.contains("command"));
  EXPECT_TRUE(document.contains("kill_escaped"));
}

TEST(EnvCommand, TheSlowConsolePolicyAndItsSource) {
  ProcessEnvironment environment({});
  auto plain = env_json({"--nproc-per-node", "2"});
  EXPECT_EQ(plain["console_overflow"]["value"], "block");
  EXPECT_TRUE(contains(plain["console_overflow"]["source"].get<std::string>(), "no line is lost"));
  auto drop = env_json({"--nproc-per-node", "2", "--console-overflow", "drop"});
  EXPECT_EQ(drop["console_overflow"]["value"], "drop");
  EXPECT_TRUE(contains(drop["console_overflow"]["source"].get<std::string>(), "--console-overflow"));
}

TEST(EnvCommand, InsideASlurmStepTheVariablesAreTheSources) {
  ProcessEnvironment environment({{"SLURM_JOB_ID", "77"},
                                  {"SLURM_STEP_ID", "0"},
                                  {"SLURM_NODEID", "1"},
                                  {"SLURM_STEP_NUM_NODES", "2"},
                                  {"SLURM_STEP_NODELIST", "gpu[3-4]"},
                                  {"SLURM_GPUS_ON_NODE", "4"}});
  std::string text = env_output({});
  EXPECT_EQ(text.rfind("dlaunch run would use:\n", 0), 0u) << text;
  EXPECT_TRUE(contains(text, "(SLURM_STEP_NUM_NODES)")) << text;
  EXPECT_TRUE(contains(text, "(SLURM_NODEID)")) << text;
  EXPECT_TRUE(contains(text, "(SLURM_GPUS_ON_NODE)")) << text;
  EXPECT_TRUE(contains(text, "gpu3")) << text;
  EXPECT_TRUE(contains(text, "77.0")) << text;
  auto document = env_json({});
  EXPECT_EQ(document["in_slurm"]["value"], true);
  EXPECT_EQ(document["nproc_per_node"]["value"], 4);
  EXPECT_EQ(document["master_addr"]["value"], "gpu3");
  EXPECT_EQ(document["run_id"]["value"], "77.0");
}

TEST(EnvCommand, SkyPilotsVariablesAreNamedAsTheSources) {
  ProcessEnvironment environment({{"SKYPILOT_NODE_IPS", "10.1.0.1\n10.1.0.2"},
                                  {"SKYPILOT_NODE_RANK", "1"},
                                  {"SKYPILOT_NUM_NODES", "2"},
                                  {"SKYPILOT_NUM_GPUS_PER_NODE", "8"}});
  auto document = env_json({});
  EXPECT_EQ(document["nnodes"]["source"], "SKYPILOT_NUM_NODES");
  EXPECT_EQ(document["node_rank"]["value"], 1);
  EXPECT_EQ(document["node_rank"]["source"], "SKYPILOT_NODE_RANK");
  EXPECT_EQ(document["nproc_per_node"]["source"], "SKYPILOT_NUM_GPUS_PER_NODE");
  EXPECT_EQ(document["master_addr"]["value"], "10.1.0.1");
  EXPECT_EQ(document["master_addr"]["source"], "first of SKYPILOT_NODE_IPS");
  EXPECT_EQ(document["master_port"]["value"], 29500);
  EXPECT_EQ(document["in_skypilot"]["value"], true);
  EXPECT_TRUE(contains(env_output({}), "(SKYPILOT_NODE_RANK)"));
}

// dlaunch env refuses what dlaunch run refuses, with the same words (one check).
TEST(EnvCommand, RefusesTheBatchScriptOfAMultiNodeJobAsRunDoes) {
  ProcessEnvironment environment({{"SLURM_JOB_ID", "77"}, {"SLURM_NODEID", "0"}, {"SLURM_JOB_NUM_NODES", "2"}});
  try {
    env_command({});
    FAIL() << "dlaunch env accepted the batch script of a 2-node job";
  } catch (const util::InputError& error) {
    EXPECT_TRUE(contains(error.what(), "SLURM_JOB_NUM_NODES=2 but SLURM_STEP_ID is unset")) << error.what();
    EXPECT_TRUE(contains(error.what(), "srun --nodes 2 --ntasks-per-node 1 dlaunch run")) << error.what();
  }
}

// Every machine has a loopback; which other interfaces it has is its own.
TEST(EnvCommand, ANodeOfSeveralShowsThisHostsInterfacesAndWhoChoosesTheWorkers) {
  ProcessEnvironment environment({});
  auto document = env_json({"--nnodes", "2", "--node-rank", "1", "--master-addr", "head"});
  EXPECT_EQ(document["interface.lo"]["value"], "skipped");
  EXPECT_EQ(document["interface.lo"]["source"], "loopback");
  EXPECT_EQ(document["worker_interface"]["value"], "chosen at the rendezvous");
  EXPECT_TRUE(contains(document["worker_interface"]["source"].get<std::string>(),
                       "NCCL_SOCKET_IFNAME and GLOO_SOCKET_IFNAME"));
  std::string text = env_output({"--nnodes", "2", "--node-rank", "1", "--master-addr", "head"});
  EXPECT_TRUE(contains(text, "\nnetwork (this host):\n")) << text;
  EXPECT_TRUE(contains(text, "(loopback)")) << text;
}

TEST(EnvCommand, ASocketIfnameTheUserSetIsShownAndChecked) {
  const std::map<std::string, std::string> nope{{"NCCL_SOCKET_IFNAME", "nope"}};
  ProcessEnvironment environment(nope);
  auto document = env_json({"--nnodes", "2", "--node-rank", "1", "--master-addr", "head"});
  EXPECT_EQ(document["nccl_socket_ifname"]["value"], "nope");
  EXPECT_TRUE(contains(document["nccl_socket_ifname"]["source"].get<std::string>(),
                       "set by you; NCCL_SOCKET_IFNAME=nope matches no interface of "));
  EXPECT_FALSE(document.contains("gloo_socket_ifname"));
  EXPECT_TRUE(contains(document["worker_interface"]["source"].get<std::string>(), "as GLOO_SOCKET_IFNAME"));
  const std::map<std::string, std::string> loopback{{"NCCL_SOCKET_IFNAME", "lo"}, {"GLOO_SOCKET_IFNAME", "lo"}};
  ProcessEnvironment both(loopback);
  document = env_json({"--nnodes", "2", "--node-rank", "1", "--master-addr", "head"});
  EXPECT_EQ(document["gloo_socket_ifname"]["source"], "set by you");
  EXPECT_EQ(document["nccl_socket_ifname"]["source"], "set by you");
  EXPECT_FALSE(document.contains("worker_interface"));
}

TEST(EnvCommand, ASingleNodeShowsNoNetwork) {
  ProcessEnvironment environment({});
  auto document = env_json({"--nproc-per-node", "2"});
  EXPECT_FALSE(document.contains("interface.lo"));
  EXPECT_FALSE(document.contains("worker_interface"));
  EXPECT_FALSE(contains(env_output({}), "network (this host)"));
}

TEST(EnvCommand, HelpSaysWhatItShows) {
  ProcessEnvironment environment({});
  std::string help = env_output({"--help"});
  EXPECT_TRUE(contains(help, "Usage: dlaunch env [--json] [run options] [PROGRAM ...]")) << help;
  EXPECT_TRUE(contains(help, "--nproc-per-node")) << help;
}

}  // namespace
}  // namespace dlaunch::cli
