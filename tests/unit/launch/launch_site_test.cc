// Where dlaunch run was started: the places where its job cannot form are
// refused at once (a multi-node Slurm job outside a step, several tasks a
// node, a size the step does not have, a loopback rendezvous across hosts,
// more launchers than a job takes), each beside the places it accepts.
#include "launch/launch_site.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "launch/launch_config.h"
#include "util/error.h"
#include "../test_support/input_error.h"
#include "../test_support/text.h"

namespace dlaunch::launch {
namespace {

using test_support::contains;
using Variables = std::map<std::string, std::string>;

LaunchConfig resolve(std::vector<std::string> args, const Variables& variables) {
  util::Environment environment(variables);
  args.push_back("train.py");
  auto options = parse_run_options(args, environment);
  EXPECT_TRUE(options.has_value());
  return resolve_launch_config(*options, environment);
}

std::string refusal(std::vector<std::string> args, const Variables& variables) {
  return test_support::input_error_of([&] { resolve(std::move(args), variables); });
}

bool accepted(std::vector<std::string> args, const Variables& variables) {
  return refusal(std::move(args), variables) == "no error";
}

// The batch script of `sbatch -N 2`: Slurm sets SLURM_NODEID=0 there, and no SLURM_STEP_ID.
Variables batch_script() {
  return {{"SLURM_JOB_ID", "77"}, {"SLURM_NODEID", "0"}, {"SLURM_JOB_NUM_NODES", "2"},
          {"SLURM_NNODES", "2"},  {"SLURM_JOB_NODELIST", "n[1-2]"}, {"SLURM_TASKS_PER_NODE", "8(x2)"}};
}

// Node 1 of `srun --nodes 3 --ntasks-per-node 1` in a job of 4 nodes.
Variables srun_step() {
  return {{"SLURM_JOB_ID", "4242"},           {"SLURM_STEP_ID", "0"},
          {"SLURM_NODEID", "1"},              {"SLURM_STEP_NUM_NODES", "3"},
          {"SLURM_JOB_NUM_NODES", "4"},       {"SLURM_STEP_NODELIST", "gpu[07-09]"},
          {"SLURM_STEP_TASKS_PER_NODE", "1(x3)"}, {"SLURM_GPUS_ON_NODE", "8"}};
}

Variables with(Variables variables, const Variables& more) {
  for (const auto& [name, value] : more) variables[name] = value;
  return variables;
}

Variables without(Variables variables, const std::vector<std::string>& names) {
  for (const auto& name : names) variables.erase(name);
  return variables;
}

Variables skypilot(const std::string& ips, const std::string& rank, const std::string& nodes) {
  return {{"SKYPILOT_NODE_IPS", ips}, {"SKYPILOT_NODE_RANK", rank}, {"SKYPILOT_NUM_NODES", nodes},
          {"SKYPILOT_NUM_GPUS_PER_NODE", "4"}};
}

TEST(LaunchSite, TheBatchScriptOfAMultiNodeJobIsRefusedWithTheSrunLine) {
  std::string error = refusal({}, batch_script());
  EXPECT_TRUE(contains(error, "SLURM_JOB_NUM_NODES=2 but SLURM_STEP_ID is unset")) << error;
  EXPECT_TRUE(contains(error, "Slurm job 77")) << error;
  EXPECT_TRUE(contains(error, "srun --nodes 2 --ntasks-per-node 1 dlaunch run [OPTIONS] train.py")) << error;
  EXPECT_TRUE(contains(error, "dlaunch submit --srun")) << error;
  EXPECT_TRUE(contains(error, "--nnodes, --node-rank and --master-addr")) << error;
}

// salloc's shell has no SLURM_NODEID: dlaunch saw no Slurm at all, trained
// on one node and exited 0.
TEST(LaunchSite, AnSallocShellOfSeveralNodesIsRefusedToo) {
  std::string error = refusal({}, {{"SLURM_JOB_ID", "5"}, {"SLURM_NNODES", "3"}});
  EXPECT_TRUE(contains(error, "SLURM_NNODES=3")) << error;
  EXPECT_TRUE(contains(error, "srun --nodes 3 --ntasks-per-node 1")) << error;
  EXPECT_TRUE(accepted({}, {{"SLURM_JOB_ID", "5"}, {"SLURM_NNODES", "1"}})) << "a job of one node";
  EXPECT_TRUE(accepted({}, {{"SLURM_NNODES", "3"}})) << "no job";
}

// Slurm's own steps have ids above its highest srun step id (and the batch
// step's id changed in 20.11); any of them is outside an srun step.
TEST(LaunchSite, StepsSlurmRunsItselfAreOutsideAnySrunStep) {
  for (const char* id : {"4294967291", "4294967294", "4294967292", "4294967295", "4294967290", "4294967281", "batch",
                         "extern", "interactive"}) {
    std::string error = refusal({}, with(batch_script(), {{"SLURM_STEP_ID", id}}));
    EXPECT_TRUE(contains(error, std::string("SLURM_STEP_ID=") + id + " is a step Slurm runs itself")) << error;
  }
  std::string step = refusal({}, with(batch_script(), {{"SLURM_STEP_ID", "4294967280"}}));
  EXPECT_TRUE(contains(step, "SLURM_TASKS_PER_NODE=8(x2)")) << "the highest id srun gives is a step: " << step;
  EXPECT_NE(refusal({}, with(batch_script(), {{"SLURM_STEP_ID", "step"}})).find("SLURM_STEP_ID"), std::string::npos);
}

TEST(LaunchSite, AStepSrunStartedIsInsideOneUnderEitherName) {
  auto step = with(batch_script(), {{"SLURM_STEP_ID", "0"}, {"SLURM_STEP_NUM_NODES", "2"},
                                    {"SLURM_STEP_TASKS_PER_NODE", "1(x2)"}});
  EXPECT_TRUE(accepted({}, step));
  auto old_name = without(step, {"SLURM_STEP_ID"});
  old_name["SLURM_STEPID"] = "3";
  EXPECT_TRUE(accepted({}, old_name));
  EXPECT_EQ(resolve({}, old_name).topology.run_id.value, "77.3");
}

// The escape: any one of these says the user placed the launchers.
TEST(LaunchSite, LaunchersPlacedByHandAreAcceptedInTheBatchScript) {
  EXPECT_TRUE(accepted({"--nnodes", "2"}, batch_script()));
  EXPECT_TRUE(accepted({"--nnodes", "1"}, batch_script()));
  EXPECT_TRUE(accepted({"--node-rank", "0"}, batch_script()));
  EXPECT_TRUE(accepted({"--master-addr", "n1"}, batch_script()));
  EXPECT_TRUE(accepted({"--rdzv-endpoint", "n1:29400"}, batch_script()));
  EXPECT_TRUE(accepted({"--standalone"}, batch_script()));
  EXPECT_TRUE(accepted({}, with(batch_script(), {{"PET_NNODES", "2"}})));
  EXPECT_TRUE(accepted({}, with(batch_script(), {{"SLURM_JOB_NUM_NODES", "1"}, {"SLURM_NNODES", "1"}})))
      << "the batch script of a one-node job runs the whole job";
}

TEST(LaunchSite, SeveralTasksOnANodeAreRefusedOnEveryNode) {
  std::string error = refusal({}, with(srun_step(), {{"SLURM_STEP_TASKS_PER_NODE", "2(x3)"}}));
  EXPECT_TRUE(contains(error, "SLURM_STEP_TASKS_PER_NODE=2(x3)")) << error;
  EXPECT_TRUE(contains(error, "runs 2 tasks on a node")) << error;
  EXPECT_TRUE(contains(error, "srun --nodes 3 --ntasks-per-node 1 dlaunch run [OPTIONS] train.py")) << error;
  EXPECT_TRUE(contains(error, "dlaunch exec")) << error;
  EXPECT_TRUE(contains(error, "dlaunch submit --launch task")) << error;
  // This node (SLURM_NODEID=1) has one task; the last has two: refused here too.
  error = refusal({}, with(without(srun_step(), {"SLURM_STEP_TASKS_PER_NODE"}), {{"SLURM_TASKS_PER_NODE", "1(x2),2"}}));
  EXPECT_TRUE(contains(error, "SLURM_TASKS_PER_NODE=1(x2),2")) << error;
  error = refusal({}, with(without(srun_step(), {"SLURM_STEP_TASKS_PER_NODE"}), {{"SLURM_NTASKS_PER_NODE", "4"}}));
  EXPECT_TRUE(contains(error, "SLURM_NTASKS_PER_NODE=4")) << error;
  error = refusal({}, with(srun_step(), {{"SLURM_STEP_TASKS_PER_NODE", "2(x"}}));
  EXPECT_TRUE(contains(error, "SLURM_STEP_TASKS_PER_NODE='2(x' is not Slurm's format")) << error;
}

TEST(LaunchSite, OneTaskPerNodeIsAccepted) {
  EXPECT_TRUE(accepted({}, srun_step()));
  EXPECT_TRUE(accepted({}, without(srun_step(), {"SLURM_STEP_TASKS_PER_NODE"})));
  // sbatch --ntasks-per-node 8 leaves its count to the step, whose own layout says one.
  EXPECT_TRUE(accepted({}, with(srun_step(), {{"SLURM_NTASKS_PER_NODE", "8"}, {"SLURM_TASKS_PER_NODE", "8(x4)"}})));
  // The batch script's layout is the allocation's, not a step's.
  EXPECT_TRUE(accepted({}, with(batch_script(), {{"SLURM_JOB_NUM_NODES", "1"}, {"SLURM_NNODES", "1"}})));
}

TEST(LaunchSite, MoreLaunchersThanTheStepHasNodesAreRefused) {
  auto one_node = with(srun_step(), {{"SLURM_STEP_NUM_NODES", "1"}, {"SLURM_NODEID", "0"},
                                     {"SLURM_STEP_NODELIST", "gpu07"}, {"SLURM_STEP_TASKS_PER_NODE", "1"}});
  std::string error = refusal({"--nnodes", "4"}, one_node);
  EXPECT_TRUE(contains(error, "--nnodes 4 asks for 4 launchers, but this Slurm step has 1 node (SLURM_STEP_NUM_NODES=1)"))
      << error;
  EXPECT_TRUE(contains(error, "srun --nodes 4 --ntasks-per-node 1 dlaunch run [OPTIONS] train.py")) << error;
  error = refusal({}, with(one_node, {{"PET_NNODES", "4"}}));
  EXPECT_TRUE(contains(error, "PET_NNODES=4 asks for 4 launchers")) << error;
  error = refusal({"--nnodes", "1", "--spare-nodes", "1"}, one_node);
  EXPECT_TRUE(contains(error, "--spare-nodes 1")) << error;
  error = refusal({"--nnodes", "4"}, srun_step());
  EXPECT_TRUE(contains(error, "this Slurm step has 3 nodes")) << error;
}

TEST(LaunchSite, LaunchersThatFillTheStepAreAccepted) {
  EXPECT_TRUE(accepted({"--nnodes", "3"}, srun_step()));
  EXPECT_TRUE(accepted({"--nnodes", "2"}, srun_step())) << "the third node is a spare";
  EXPECT_TRUE(accepted({"--nnodes", "2", "--spare-nodes", "1"}, srun_step()));
  EXPECT_TRUE(accepted({"--spare-nodes", "1"}, srun_step()));
  EXPECT_TRUE(accepted({"--standalone"}, srun_step())) << "a job of its own on each node, as torchrun's";
}

TEST(LaunchSite, ANodeRankGivenMustBeTheNodesSlurmNodeId) {
  std::string error = refusal({"--node-rank", "0"}, srun_step());
  EXPECT_TRUE(contains(error, "--node-rank 0 is not this node's SLURM_NODEID=1")) << error;
  EXPECT_TRUE(contains(error, "leave out --node-rank")) << error;
  error = refusal({}, with(srun_step(), {{"PET_NODE_RANK", "2"}}));
  EXPECT_TRUE(contains(error, "PET_NODE_RANK=2 is not this node's SLURM_NODEID=1")) << error;
  EXPECT_TRUE(accepted({"--node-rank", "1"}, srun_step()));
}

TEST(LaunchSite, ALoopbackRendezvousAcrossTheHostsOfAStepIsRefused) {
  for (const char* host : {"127.0.0.1", "127.0.1.1", "localhost", "LOCALHOST.", "node.localhost", "::1", "0.0.0.0",
                           "::ffff:127.0.0.1"}) {
    std::string error = refusal({"--master-addr", host}, srun_step());
    EXPECT_TRUE(contains(error, std::string("--master-addr ") + host + " is a loopback address")) << error;
    EXPECT_TRUE(contains(error, "this Slurm step spans 3 nodes (SLURM_STEP_NUM_NODES=3)")) << error;
    EXPECT_TRUE(contains(error, "leave out --master-addr")) << error;
  }
  std::string error = refusal({"--rdzv-endpoint", "[::1]:29400"}, srun_step());
  EXPECT_TRUE(contains(error, "--rdzv-endpoint ::1 is a loopback address")) << error;
  error = refusal({}, with(srun_step(), {{"PET_MASTER_ADDR", "localhost"}}));
  EXPECT_TRUE(contains(error, "PET_MASTER_ADDR=localhost is a loopback address")) << error;
}

TEST(LaunchSite, ALoopbackRendezvousIsAcceptedWhereTheHostsMayBeOne) {
  EXPECT_TRUE(accepted({"--nnodes", "2", "--master-addr", "127.0.0.1"}, {})) << "outside Slurm: one host may run all";
  EXPECT_TRUE(accepted({"--nnodes", "2", "--master-addr", "localhost", "--node-rank", "1"}, {}));
  auto one_node = with(srun_step(), {{"SLURM_STEP_NUM_NODES", "1"}, {"SLURM_NODEID", "0"},
                                     {"SLURM_STEP_NODELIST", "gpu07"}, {"SLURM_STEP_TASKS_PER_NODE", "1"}});
  EXPECT_TRUE(accepted({"--master-addr", "127.0.0.1"}, one_node));
  for (const char* host : {"10.0.0.1", "localhost-gw", "128.0.0.1", "fe80::1"})
    EXPECT_TRUE(accepted({"--master-addr", host}, srun_step())) << host;
  EXPECT_TRUE(accepted({}, skypilot("127.0.0.1\n127.0.0.1", "1", "2"))) << "SkyPilot's IPs name one host";
  std::string error = refusal({"--master-addr", "127.0.0.1"}, skypilot("10.0.0.1\n10.0.0.2", "1", "2"));
  EXPECT_TRUE(contains(error, "SKYPILOT_NODE_IPS lists 2 different hosts")) << error;
}

TEST(LaunchSite, TheLaunchersOfAJobAreCapped) {
  std::string error = refusal({"--spare-nodes", "1000000"}, {});
  EXPECT_TRUE(contains(error, "--nnodes") || contains(error, "1 (from default)")) << error;
  EXPECT_TRUE(contains(error, "--spare-nodes 1000000 make 1000001 launchers")) << error;
  EXPECT_TRUE(contains(error, std::to_string(kMostLaunchers))) << error;
  EXPECT_TRUE(contains(error, "fewer spare nodes")) << error;
  error = refusal({"--nnodes", std::to_string(kMostLaunchers + 1)}, {});
  EXPECT_TRUE(contains(error, "--nnodes " + std::to_string(kMostLaunchers + 1) + " asks for")) << error;
  const std::string most = std::to_string(kMostLaunchers);
  EXPECT_TRUE(accepted({"--nnodes", most, "--node-rank", "1"}, {}));
  EXPECT_TRUE(accepted({"--nnodes", "16000", "--spare-nodes", std::to_string(kMostLaunchers - 16000)}, {}));
  EXPECT_FALSE(accepted({"--nnodes", "16000", "--spare-nodes", std::to_string(kMostLaunchers - 15999)}, {}));
  error = refusal({}, {{"PET_NNODES", std::to_string(kMostLaunchers + 1)}});
  EXPECT_TRUE(contains(error, "PET_NNODES=" + std::to_string(kMostLaunchers + 1) + " asks for")) << error;
}

// SkyPilot places a launcher on each node: its variables stand for the
// placement in a Slurm job outside a step; an srun step comes first.
TEST(LaunchSite, SkyPilotPlacesTheLaunchersOfItsTask) {
  auto sky = skypilot("10.0.0.1\n10.0.0.2", "1", "2");
  EXPECT_TRUE(accepted({}, with(batch_script(), sky)));
  auto topology = resolve({}, with(srun_step(), sky)).topology;
  EXPECT_EQ(topology.nnodes.source, "SLURM_STEP_NUM_NODES");
  EXPECT_FALSE(topology.in_skypilot);
}

}  // namespace
}  // namespace dlaunch::launch
