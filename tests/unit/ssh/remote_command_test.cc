// The remote commands dlaunch ssh builds: the ssh argv, each host's launch
// command, and the variables carried to every host.
#include "ssh/remote_command.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "sample_plan.h"
#include "util/error.h"

namespace dlaunch::ssh {
namespace {

using test_support::sample_plan;

TEST(SshRemoteCommand, SshArgvPutsTheUsersOptionsFirst) {
  auto argv = ssh_argv(sample_plan(), "h2", "REMOTE");
  EXPECT_EQ(argv, (std::vector<std::string>{"ssh", "-F", "cfg", "-o", "BatchMode=yes", "-o",
                                            "ConnectTimeout=7", "--", "h2", "REMOTE"}));
}

TEST(SshRemoteCommand, LaunchCommandCarriesRankSlotsAndEnvButNoSecret) {
  JobPlan plan = sample_plan();
  plan.uneven = true;
  std::string command = remote_launch_command(plan, HostLaunch{"h2", 1, 4, {1, 3}});
  EXPECT_EQ(command.find("cd -- '/work/my project' && IFS= read -r DLAUNCH_RDZV_TOKEN && export "
                         "DLAUNCH_RDZV_TOKEN && exec env NCCL_DEBUG=INFO CUDA_VISIBLE_DEVICES=1,3 "
                         "/opt/dlaunch run --nnodes 3 --node-rank 1 --master-addr h1 --master-port "
                         "29400 --rdzv-id ssh-abc --stop-on-stdin-close --prefix '[h2:rank{rank}]:' "
                         "--nproc-per-node 4 --allow-uneven --max-restarts 1 -- train.py --lr 0.1"),
            0u)
      << command;
}

// dlaunch run refuses an option given twice with different values, so the
// host's default prefix gives way to the user's own.
TEST(SshRemoteCommand, TheUsersPrefixReplacesTheHostsDefault) {
  JobPlan plan = sample_plan();
  plan.run_args = {"--prefix=[{host}] "};
  std::string command = remote_launch_command(plan, HostLaunch{"h2", 1, std::nullopt, {}});
  EXPECT_EQ(command.find("[h2:rank{rank}]:"), std::string::npos) << command;
  EXPECT_NE(command.find("'--prefix=[{host}] '"), std::string::npos) << command;
  plan.run_args = {"--log-line-prefix-template", "${rank}: "};
  command = remote_launch_command(plan, HostLaunch{"h2", 1, std::nullopt, {}});
  EXPECT_EQ(command.find("[h2:rank{rank}]:"), std::string::npos) << command;
}

TEST(SshRemoteCommand, SpareHostsAreNamedToEveryLauncher) {
  JobPlan plan = sample_plan();
  plan.nnodes = 2;
  plan.spare_nodes = 1;
  std::string command = remote_launch_command(plan, HostLaunch{"h3", 2, std::nullopt, {}});
  EXPECT_NE(command.find("/opt/dlaunch run --nnodes 2 --node-rank 2 --master-addr h1 "),
            std::string::npos)
      << command;
  EXPECT_NE(command.find(" --prefix '[h3:rank{rank}]:' --spare-nodes 1 --max-restarts 1 -- train.py"),
            std::string::npos)
      << command;
  // Without spares the launchers are told of none.
  plan.spare_nodes = 0;
  command = remote_launch_command(plan, HostLaunch{"h2", 1, std::nullopt, {}});
  EXPECT_EQ(command.find("--spare-nodes"), std::string::npos) << command;
}

TEST(SshRemoteCommand, CarriedVariables) {
  auto lookup = [](const std::string& name) -> std::optional<std::string> {
    if (name == "HOME") return std::string("/root");
    return std::nullopt;
  };
  auto variables = carried_variables({"HOME", "A=1=2"}, std::string("# c\nexport B=x y\n\nC=\n"), "e.env", lookup);
  EXPECT_EQ(variables, (std::vector<std::pair<std::string, std::string>>{
                           {"B", "x y"}, {"C", ""}, {"HOME", "/root"}, {"A", "1=2"}}));
  auto error = [&](std::vector<std::string> env, std::optional<std::string> file) {
    try {
      carried_variables(env, file, "e.env", lookup);
    } catch (const util::InputError& e) {
      return std::string(e.what());
    }
    return std::string("<no error>");
  };
  EXPECT_NE(error({"UNSET_HERE"}, std::nullopt).find("UNSET_HERE is not set here"), std::string::npos);
  EXPECT_NE(error({"1BAD=x"}, std::nullopt).find("is not a variable name"), std::string::npos);
  EXPECT_NE(error({"DLAUNCH_RDZV_TOKEN=x"}, std::nullopt).find("rendezvous secret"), std::string::npos);
  EXPECT_NE(error({}, std::string("ok=1\nnot an assignment\n")).find("e.env:2"), std::string::npos);
}

}  // namespace
}  // namespace dlaunch::ssh
