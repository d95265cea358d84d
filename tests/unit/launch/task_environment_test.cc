// dlaunch exec: Slurm task variables mapped onto torchrun's.
#include "launch/task_environment.h"

#include <gtest/gtest.h>

#include "launch/launch_config.h"
#include "util/error.h"

namespace dlaunch::launch {
namespace {

util::Environment task(int procid, int localid, int nodeid) {
  return util::Environment(std::map<std::string, std::string>{
      {"SLURM_JOB_ID", "900"},
      {"SLURM_STEP_ID", "2"},
      {"SLURM_PROCID", std::to_string(procid)},
      {"SLURM_LOCALID", std::to_string(localid)},
      {"SLURM_NODEID", std::to_string(nodeid)},
      {"SLURM_NTASKS", "10"},
      {"SLURM_STEP_NUM_NODES", "3"},
      {"SLURM_STEP_TASKS_PER_NODE", "4(x2),2"},
      {"SLURM_STEP_NODELIST", "n[3-5]"}});
}

TEST(TaskEnvironment, MapsSlurmTaskVariables) {
  util::Environment environment = task(9, 1, 2);
  add_task_environment(environment);
  auto get = [&](const char* name) { return environment.get(name).value_or("<unset>"); };
  EXPECT_EQ(get("RANK"), "9");
  EXPECT_EQ(get("LOCAL_RANK"), "1");
  EXPECT_EQ(get("WORLD_SIZE"), "10");
  EXPECT_EQ(get("LOCAL_WORLD_SIZE"), "2");
  EXPECT_EQ(get("GROUP_RANK"), "2");
  EXPECT_EQ(get("GROUP_WORLD_SIZE"), "3");
  EXPECT_EQ(get("MASTER_ADDR"), "n3");
  EXPECT_EQ(get("MASTER_PORT"), std::to_string(derive_slurm_port("900", 2, 20000, 32767)));
  EXPECT_EQ(get("TORCHELASTIC_USE_AGENT_STORE"), "False");
  EXPECT_EQ(get("TORCHELASTIC_RUN_ID"), "900");
}

TEST(TaskEnvironment, EveryTaskAgreesOnTheMasterPort) {
  util::Environment first = task(0, 0, 0), last = task(9, 1, 2);
  add_task_environment(first);
  add_task_environment(last);
  EXPECT_EQ(first.get("MASTER_PORT"), last.get("MASTER_PORT"));
}

TEST(TaskEnvironment, ReservedPortsWin) {
  util::Environment environment = task(0, 0, 0);
  environment.set("SLURM_STEP_RESV_PORTS", "12001-12003");
  add_task_environment(environment);
  EXPECT_EQ(environment.get("MASTER_PORT"), "12001");
}

TEST(TaskEnvironment, OutsideSrunItSaysHowToStartIt) {
  util::Environment outside;
  try {
    add_task_environment(outside);
    FAIL();
  } catch (const util::InputError& error) {
    EXPECT_NE(std::string(error.what()).find("srun"), std::string::npos);
  }
  util::Environment no_procid = task(0, 0, 0);
  no_procid.erase("SLURM_PROCID");
  EXPECT_THROW(add_task_environment(no_procid), util::InputError);
}

}  // namespace
}  // namespace dlaunch::launch
