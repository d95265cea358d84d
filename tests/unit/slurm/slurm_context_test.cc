// What a Slurm step tells its processes through SLURM_* variables, read
// without running any Slurm command.
#include "slurm/slurm_context.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "util/error.h"
#include "../test_support/input_error.h"

namespace dlaunch::slurm {
namespace {

std::optional<SlurmContext> read(std::map<std::string, std::string> variables) {
  return read_slurm_context(util::Environment(std::move(variables)));
}

std::string error_of(std::map<std::string, std::string> variables) {
  return test_support::input_error_of([&] { read(std::move(variables)); });
}

TEST(SlurmContext, OutsideAStepThereIsNone) {
  EXPECT_EQ(read({}), std::nullopt);
  EXPECT_EQ(read({{"SLURM_JOB_ID", "7"}}), std::nullopt);  // salloc's shell: no node id
  EXPECT_EQ(read({{"SLURM_NODEID", "0"}}), std::nullopt);
  EXPECT_EQ(read({{"SLURM_JOB_ID", ""}, {"SLURM_NODEID", "0"}}), std::nullopt);
}

TEST(SlurmContext, AStepGivesEveryValueWithTheVariableItCameFrom) {
  auto context = read({{"SLURM_JOB_ID", "42"},
                       {"SLURM_STEP_ID", "3"},
                       {"SLURM_STEP_NUM_NODES", "2"},
                       {"SLURM_JOB_NUM_NODES", "4"},
                       {"SLURM_NODEID", "1"},
                       {"SLURM_STEP_NODELIST", "gpu[07-08]"},
                       {"SLURM_JOB_NODELIST", "gpu[01-04]"},
                       {"SLURM_GPUS_ON_NODE", "8"},
                       {"CUDA_VISIBLE_DEVICES", "0,1"},
                       {"SLURM_STEP_RESV_PORTS", "12000-12004"}});
  ASSERT_TRUE(context);
  EXPECT_EQ(context->job_id, "42");
  EXPECT_EQ(context->step_id, 3u);
  EXPECT_EQ(context->num_nodes->value, 2);
  EXPECT_EQ(context->num_nodes->source, "SLURM_STEP_NUM_NODES");
  EXPECT_EQ(context->node_id->value, 1);
  EXPECT_EQ(context->nodelist->value, "gpu[07-08]");
  EXPECT_EQ(context->nodelist->source, "SLURM_STEP_NODELIST");
  EXPECT_EQ(context->gpus_on_node->value, 8);
  EXPECT_EQ(context->gpus_on_node->source, "SLURM_GPUS_ON_NODE");
  EXPECT_EQ(context->reserved_port, 12000);
  EXPECT_TRUE(context->in_srun_step());
  auto first = first_node(*context);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->value, "gpu07");
  EXPECT_EQ(first->source, "first host of SLURM_STEP_NODELIST");
}

TEST(SlurmContext, JobVariablesStandInForTheStepsAndGpusAreCountedFromDeviceLists) {
  auto context = read({{"SLURM_JOB_ID", "42"},
                       {"SLURM_NODEID", "0"},
                       {"SLURM_NNODES", "3"},
                       {"SLURM_NODELIST", "a,b,c"},
                       {"SLURM_STEP_GPUS", "NoDevFiles"},
                       {"SLURM_JOB_GPUS", "0,2,5"},
                       {"SLURM_STEP_RESV_PORTS", "12003,12007"}});
  ASSERT_TRUE(context);
  EXPECT_EQ(context->step_id, std::nullopt);
  EXPECT_EQ(context->num_nodes->source, "SLURM_NNODES");
  EXPECT_EQ(context->nodelist->source, "SLURM_NODELIST");
  EXPECT_EQ(context->gpus_on_node->value, 3);
  EXPECT_EQ(context->gpus_on_node->source, "SLURM_JOB_GPUS");
  EXPECT_EQ(context->reserved_port, 12003);
  EXPECT_EQ(read({{"SLURM_JOB_ID", "1"}, {"SLURM_NODEID", "0"}})->gpus_on_node, std::nullopt);
}

TEST(SlurmContext, OnlyAStepSrunStartedIsAnSrunStep) {
  auto batch = read({{"SLURM_JOB_ID", "5"}, {"SLURM_NODEID", "0"}, {"SLURM_JOB_NUM_NODES", "2"}});
  EXPECT_FALSE(batch->in_srun_step());
  auto step = read({{"SLURM_JOB_ID", "5"}, {"SLURM_NODEID", "0"}, {"SLURM_STEP_ID", "0"},
                    {"SLURM_JOB_NUM_NODES", "2"}});
  EXPECT_TRUE(step->in_srun_step());
  EXPECT_EQ(read({{"SLURM_JOB_ID", "5"}, {"SLURM_NODEID", "0"}, {"SLURM_STEPID", "7"}})->step_id, 7u);
  // Above Slurm's highest srun step id: the batch script (before and since
  // 20.11), the extern and interactive steps; or their names.
  for (const char* own : {"4294967294", "4294967291", "4294967292", "4294967290", "4294967295", "batch", "extern"}) {
    auto context = read({{"SLURM_JOB_ID", "5"}, {"SLURM_NODEID", "0"}, {"SLURM_STEP_ID", own}});
    EXPECT_FALSE(context->in_srun_step()) << own;
  }
  EXPECT_EQ(read({{"SLURM_JOB_ID", "5"}, {"SLURM_NODEID", "0"}, {"SLURM_STEP_ID", "4294967280"}})->step_id,
            kMaxNormalStepId);
}

TEST(SlurmContext, OutsideAStepOfAMultiNodeJobNeedsNoNodeId) {
  auto outside = outside_step_of_multinode_job(util::Environment({{"SLURM_JOB_ID", "5"}, {"SLURM_NNODES", "3"}}));
  ASSERT_TRUE(outside);
  EXPECT_EQ(outside->job_id, "5");
  EXPECT_EQ(outside->job_nodes.value, 3);
  EXPECT_EQ(outside->job_nodes.source, "SLURM_NNODES");
  EXPECT_EQ(outside->why, "SLURM_STEP_ID is unset");
  auto batch = outside_step_of_multinode_job(
      util::Environment({{"SLURM_JOB_ID", "5"}, {"SLURM_JOB_NUM_NODES", "2"}, {"SLURM_STEP_ID", "4294967291"}}));
  ASSERT_TRUE(batch);
  EXPECT_EQ(batch->job_nodes.source, "SLURM_JOB_NUM_NODES");
  EXPECT_NE(batch->why.find("SLURM_STEP_ID=4294967291 is a step Slurm runs itself"), std::string::npos) << batch->why;
  for (const std::map<std::string, std::string>& inside :
       {std::map<std::string, std::string>{{"SLURM_JOB_ID", "5"}, {"SLURM_JOB_NUM_NODES", "2"}, {"SLURM_STEP_ID", "0"}},
        std::map<std::string, std::string>{{"SLURM_JOB_ID", "5"}, {"SLURM_JOB_NUM_NODES", "1"}},
        std::map<std::string, std::string>{{"SLURM_JOB_NUM_NODES", "2"}}})
    EXPECT_FALSE(outside_step_of_multinode_job(util::Environment(inside)));
}

TEST(SlurmContext, AMalformedValueIsNamed) {
  EXPECT_NE(error_of({{"SLURM_JOB_ID", "5"}, {"SLURM_NODEID", "x"}}).find("SLURM_NODEID must be an integer"),
            std::string::npos);
  EXPECT_NE(error_of({{"SLURM_JOB_ID", "5"}, {"SLURM_NODEID", "0"}, {"SLURM_STEP_NUM_NODES", "0"}})
                .find("SLURM_STEP_NUM_NODES must be an integer from 1 to"),
            std::string::npos);
  EXPECT_NE(error_of({{"SLURM_JOB_ID", "5"}, {"SLURM_NODEID", "0"}, {"SLURM_STEP_ID", "-1"}})
                .find("SLURM_STEP_ID must be an integer"),
            std::string::npos);
  EXPECT_NE(error_of({{"SLURM_JOB_ID", "5"}, {"SLURM_NODEID", "0"}, {"SLURM_STEP_RESV_PORTS", "70000"}})
                .find("SLURM_STEP_RESV_PORTS must be an integer from 1 to 65535, got '70000'"),
            std::string::npos);
  auto context = read({{"SLURM_JOB_ID", "5"}, {"SLURM_NODEID", "0"}, {"SLURM_JOB_NODELIST", "n[1-"}});
  try {
    first_node(*context);
    FAIL() << "a broken node list gave a first node";
  } catch (const util::InputError& error) {
    EXPECT_EQ(std::string(error.what()).rfind("SLURM_JOB_NODELIST is not a valid Slurm hostlist: ", 0), 0u)
        << error.what();
  }
}

TEST(SlurmContext, WithoutANodeListThereIsNoFirstNode) {
  EXPECT_EQ(first_node(SlurmContext{}), std::nullopt);
}

TEST(DeviceList, CountsTheDevicesNamed) {
  EXPECT_EQ(count_device_list("0,1,3"), 3);
  EXPECT_EQ(count_device_list("GPU-8f2c,GPU-1a3b"), 2);
  EXPECT_EQ(count_device_list(" 0 , 1 "), 2);
  EXPECT_EQ(count_device_list("0,,1,"), 2);
  EXPECT_EQ(count_device_list("NoDevFiles"), 0);
  EXPECT_EQ(count_device_list(""), 0);
  EXPECT_EQ(count_device_list("  "), 0);
}

}  // namespace
}  // namespace dlaunch::slurm
