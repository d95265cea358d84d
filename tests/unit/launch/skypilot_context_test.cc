// SkyPilot's variables: read strictly (each named when wrong), and taken
// by dlaunch run with zero flags, after flags, PET_* and a Slurm step.
#include "launch/skypilot_context.h"

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

// Node 1 of a SkyPilot task of 2 nodes with 4 GPUs each, as its run commands see it.
Variables task_node() {
  return {{"SKYPILOT_NODE_IPS", "10.0.0.5\n10.0.0.6\n"},
          {"SKYPILOT_NODE_RANK", "1"},
          {"SKYPILOT_NUM_NODES", "2"},
          {"SKYPILOT_NUM_GPUS_PER_NODE", "4"}};
}

std::optional<SkyPilotContext> read(const Variables& variables) {
  return read_skypilot_context(util::Environment(variables));
}

std::string error_of(const Variables& variables) {
  return test_support::input_error_of([&] { read(variables); });
}

Topology topology_of(std::vector<std::string> args, const Variables& variables) {
  util::Environment environment(variables);
  args.push_back("train.py");
  auto options = parse_run_options(args, environment);
  EXPECT_TRUE(options.has_value());
  return resolve_launch_config(*options, environment).topology;
}

TEST(SkyPilotContext, NoneWithoutItsVariables) {
  EXPECT_EQ(read({}), std::nullopt);
  EXPECT_EQ(read({{"SKYPILOT_NUM_GPUS_PER_NODE", "8"}, {"SKYPILOT_TASK_ID", "t"}}), std::nullopt);
}

TEST(SkyPilotContext, ATaskNodeGivesEveryValueWithItsVariable) {
  auto context = read(task_node());
  ASSERT_TRUE(context);
  EXPECT_EQ(context->num_nodes.value, 2);
  EXPECT_EQ(context->num_nodes.source, "SKYPILOT_NUM_NODES");
  EXPECT_EQ(context->node_rank.value, 1);
  EXPECT_EQ(context->node_rank.source, "SKYPILOT_NODE_RANK");
  EXPECT_EQ(context->node_ips, (std::vector<std::string>{"10.0.0.5", "10.0.0.6"}));
  EXPECT_EQ(context->head_ip.value, "10.0.0.5");
  EXPECT_EQ(context->head_ip.source, "first of SKYPILOT_NODE_IPS");
  ASSERT_TRUE(context->gpus_per_node);
  EXPECT_EQ(context->gpus_per_node->value, 4);
}

TEST(SkyPilotContext, EachWrongValueIsNamed) {
  for (const char* name : {"SKYPILOT_NODE_IPS", "SKYPILOT_NODE_RANK", "SKYPILOT_NUM_NODES"}) {
    auto variables = task_node();
    variables.erase(name);
    std::string error = error_of(variables);
    EXPECT_TRUE(contains(error, std::string(name) + " is not set")) << error;
  }
  auto variables = task_node();
  variables["SKYPILOT_NODE_IPS"] = "10.0.0.5";
  std::string error = error_of(variables);
  EXPECT_TRUE(contains(error, "SKYPILOT_NODE_IPS lists 1 address but SKYPILOT_NUM_NODES=2")) << error;
  variables["SKYPILOT_NODE_IPS"] = "10.0.0.5 10.0.0.6";
  EXPECT_TRUE(contains(error_of(variables), "SKYPILOT_NODE_IPS holds '10.0.0.5 10.0.0.6'"));
  variables = task_node();
  variables["SKYPILOT_NODE_RANK"] = "2";
  error = error_of(variables);
  EXPECT_TRUE(contains(error, "SKYPILOT_NODE_RANK=2 is out of range: SKYPILOT_NUM_NODES=2 gives node ranks 0 to 1"))
      << error;
  variables["SKYPILOT_NODE_RANK"] = "one";
  EXPECT_TRUE(contains(error_of(variables), "SKYPILOT_NODE_RANK"));
  variables = task_node();
  variables["SKYPILOT_NUM_NODES"] = "0";
  EXPECT_TRUE(contains(error_of(variables), "SKYPILOT_NUM_NODES"));
  variables = task_node();
  variables["SKYPILOT_NUM_GPUS_PER_NODE"] = "-1";
  EXPECT_TRUE(contains(error_of(variables), "SKYPILOT_NUM_GPUS_PER_NODE"));
}

TEST(SkyPilotContext, ZeroFlagsTakeTheTopologyFromIt) {
  auto topology = topology_of({}, task_node());
  EXPECT_TRUE(topology.in_skypilot);
  EXPECT_FALSE(topology.in_slurm);
  EXPECT_EQ(topology.nnodes.value, 2);
  EXPECT_EQ(topology.nnodes.source, "SKYPILOT_NUM_NODES");
  EXPECT_EQ(topology.node_rank.value, 1);
  EXPECT_EQ(topology.node_rank.source, "SKYPILOT_NODE_RANK");
  EXPECT_EQ(topology.master_addr.value, "10.0.0.5");
  EXPECT_EQ(topology.master_addr.source, "first of SKYPILOT_NODE_IPS");
  EXPECT_EQ(topology.nproc_per_node.value, 4);
  EXPECT_EQ(topology.nproc_per_node.source, "SKYPILOT_NUM_GPUS_PER_NODE");
  ASSERT_TRUE(topology.master_port);
  EXPECT_EQ(topology.master_port->value, 29500) << "torchrun's default port";
  EXPECT_EQ(topology.master_port->source, "default");
}

TEST(SkyPilotContext, FlagsAndPetVariablesComeFirst) {
  auto variables = task_node();
  variables["PET_NPROC_PER_NODE"] = "2";
  variables["PET_MASTER_PORT"] = "29400";
  auto topology = topology_of({"--master-addr", "10.0.0.9"}, variables);
  EXPECT_EQ(topology.nproc_per_node.source, "PET_NPROC_PER_NODE");
  EXPECT_EQ(topology.master_addr.value, "10.0.0.9");
  EXPECT_EQ(topology.master_port->value, 29400);
  EXPECT_EQ(topology.node_rank.source, "SKYPILOT_NODE_RANK");
  EXPECT_EQ(topology_of({"--nnodes", "2", "--node-rank", "0"}, task_node()).node_rank.source, "--node-rank");
  EXPECT_EQ(topology_of({"--nproc-per-node", "gpu"}, task_node()).nproc_per_node.value, 4);
}

TEST(SkyPilotContext, NodesWithoutGpusRunOneWorker) {
  auto variables = task_node();
  variables["SKYPILOT_NUM_GPUS_PER_NODE"] = "0";
  auto nproc = topology_of({}, variables).nproc_per_node;
  EXPECT_EQ(nproc.value, 1);
  EXPECT_EQ(nproc.source, "default");
}

TEST(SkyPilotContext, ASlurmStepComesFirst) {
  auto variables = task_node();
  variables.insert({{"SLURM_JOB_ID", "9"}, {"SLURM_STEP_ID", "0"}, {"SLURM_NODEID", "0"},
                    {"SLURM_STEP_NUM_NODES", "1"}, {"SLURM_STEP_NODELIST", "n1"}});
  auto topology = topology_of({}, variables);
  EXPECT_TRUE(topology.in_slurm);
  EXPECT_FALSE(topology.in_skypilot);
  EXPECT_EQ(topology.nnodes.value, 1);
  EXPECT_EQ(topology.master_addr.value, "n1");
  // A malformed SkyPilot value does not matter where Slurm places the launcher.
  variables["SKYPILOT_NODE_RANK"] = "x";
  EXPECT_EQ(topology_of({}, variables).nnodes.source, "SLURM_STEP_NUM_NODES");
}

}  // namespace
}  // namespace dlaunch::launch
