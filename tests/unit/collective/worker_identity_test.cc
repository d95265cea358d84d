// A check worker's identity: from the torchrun variables a launcher sets,
// or from Slurm's task variables inside an srun task.
#include "collective/worker_identity.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "util/error.h"
#include "util/ports.h"
#include "../test_support/input_error.h"

namespace dlaunch::collective {
namespace {

WorkerIdentity read(std::map<std::string, std::string> variables) {
  return read_worker_identity(util::Environment(std::move(variables)));
}

std::string error_of(std::map<std::string, std::string> variables) {
  return test_support::input_error_of([&] { read(std::move(variables)); });
}

TEST(WorkerIdentity, FromTheLaunchersVariables) {
  WorkerIdentity identity = read({{"RANK", "5"}, {"WORLD_SIZE", "8"}, {"LOCAL_RANK", "1"},
                                  {"MASTER_ADDR", "node1"}, {"MASTER_PORT", "29500"}});
  EXPECT_EQ(identity.rank, 5);
  EXPECT_EQ(identity.world_size, 8);
  EXPECT_EQ(identity.local_rank, 1);
  EXPECT_EQ(identity.master_addr, "node1");
  EXPECT_EQ(identity.master_port, 29500);
  EXPECT_EQ(identity.host, util::local_host_name());
}

TEST(WorkerIdentity, LocalRankAndMasterAddressHaveDefaults) {
  WorkerIdentity identity = read({{"RANK", "0"}, {"WORLD_SIZE", "1"}, {"MASTER_PORT", "1234"}});
  EXPECT_EQ(identity.local_rank, 0);
  EXPECT_EQ(identity.master_addr, "127.0.0.1");
}

TEST(WorkerIdentity, InsideAnSrunTaskSlurmsVariablesStandIn) {
  WorkerIdentity identity = read({{"SLURM_JOB_ID", "900"},
                                  {"SLURM_STEP_ID", "2"},
                                  {"SLURM_PROCID", "9"},
                                  {"SLURM_LOCALID", "1"},
                                  {"SLURM_NODEID", "2"},
                                  {"SLURM_NTASKS", "10"},
                                  {"SLURM_STEP_NUM_NODES", "3"},
                                  {"SLURM_STEP_TASKS_PER_NODE", "4(x2),2"},
                                  {"SLURM_STEP_NODELIST", "n[3-5]"},
                                  {"SLURM_STEP_RESV_PORTS", "12000-12003"}});
  EXPECT_EQ(identity.rank, 9);
  EXPECT_EQ(identity.world_size, 10);
  EXPECT_EQ(identity.local_rank, 1);
  EXPECT_EQ(identity.master_addr, "n3");
  EXPECT_EQ(identity.master_port, 12000);
}

TEST(WorkerIdentity, ALaunchersRankWinsOverSlurms) {
  WorkerIdentity identity = read({{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "29500"},
                                  {"SLURM_PROCID", "7"}, {"SLURM_JOB_ID", "900"}, {"SLURM_NODEID", "0"}});
  EXPECT_EQ(identity.rank, 1);
  EXPECT_EQ(identity.world_size, 2);
}

TEST(WorkerIdentity, AMissingVariableSaysHowToStartTheCheck) {
  std::string message = error_of({{"RANK", "0"}, {"MASTER_PORT", "29500"}});
  EXPECT_NE(message.find("WORLD_SIZE is not set: dlaunch check runs as a worker; start it with a "
                         "launcher, e.g. 'dlaunch run --nproc-per-node 4 -- dlaunch check'"),
            std::string::npos)
      << message;
  EXPECT_NE(error_of({{"WORLD_SIZE", "2"}, {"MASTER_PORT", "29500"}}).find("RANK is not set"),
            std::string::npos);
  EXPECT_NE(error_of({{"RANK", "0"}, {"WORLD_SIZE", "2"}}).find("MASTER_PORT is not set"),
            std::string::npos);
}

TEST(WorkerIdentity, TheLaunchersInterfaceComesFromGlooSocketIfname) {
  EXPECT_EQ(read({{"RANK", "0"}, {"WORLD_SIZE", "1"}, {"MASTER_PORT", "1234"}}).socket_ifname, "");
  EXPECT_EQ(read({{"RANK", "0"}, {"WORLD_SIZE", "1"}, {"MASTER_PORT", "1234"},
                  {"GLOO_SOCKET_IFNAME", "ib0,eth0"}})
                .socket_ifname,
            "ib0,eth0");
}

TEST(WorkerIdentity, ValuesOutOfRangeAreNamed) {
  EXPECT_NE(error_of({{"RANK", "2"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "29500"}})
                .find("RANK must be an integer from 0 to 1, got '2'"),
            std::string::npos);
  EXPECT_NE(error_of({{"RANK", "0"}, {"WORLD_SIZE", "0"}, {"MASTER_PORT", "29500"}})
                .find("WORLD_SIZE must be an integer from 1 to"),
            std::string::npos);
  EXPECT_NE(error_of({{"RANK", "0"}, {"WORLD_SIZE", "1"}, {"MASTER_PORT", "65536"}})
                .find("MASTER_PORT must be an integer from 1 to 65535"),
            std::string::npos);
  EXPECT_NE(error_of({{"RANK", "0"}, {"WORLD_SIZE", "1"}, {"MASTER_PORT", "1"}, {"LOCAL_RANK", "-1"}})
                .find("LOCAL_RANK must be an integer"),
            std::string::npos);
}

}  // namespace
}  // namespace dlaunch::collective
