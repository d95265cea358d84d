// dlaunch ssh's command line, the remote commands it builds, and how it
// reads a host's preflight answer.
#include <gtest/gtest.h>

#include "ssh/remote_command.h"
#include "ssh/ssh_options.h"
#include "ssh/ssh_preflight.h"
#include "util/error.h"

namespace dlaunch::ssh {
namespace {

SshOptions parse(std::vector<std::string> args) { return *parse_ssh_options(args); }

std::string usage_error(std::vector<std::string> args) {
  try {
    parse_ssh_options(args);
  } catch (const InputError& error) {
    return error.what();
  }
  return "<no error>";
}

JobPlan sample_plan() {
  JobPlan plan;
  plan.nnodes = 3;
  plan.master_addr = "h1";
  plan.master_port = 29400;
  plan.run_id = "ssh-abc";
  plan.working_dir = "/work/my project";
  plan.env = {{"NCCL_DEBUG", "INFO"}};
  plan.remote_dlaunch = "/opt/dlaunch";
  plan.run_args = {"--max-restarts", "1"};
  plan.command = {"train.py", "--lr", "0.1"};
  plan.ssh_args = {"-F", "cfg"};
  plan.connect_timeout = 7;
  return plan;
}

TEST(SshOptions, RunOptionsGoToEveryHost) {
  auto options = parse({"--hosts", "a,b", "--nproc-per-node", "2", "--ssh-arg=-F", "--ssh-arg", "cfg",
                        "-t", "3", "--max_restarts=1", "train.py", "--hosts", "not-ours"});
  EXPECT_EQ(options.hosts, "a,b");
  EXPECT_EQ(options.ssh_args, (std::vector<std::string>{"-F", "cfg"}));
  EXPECT_EQ(options.run_args,
            (std::vector<std::string>{"--nproc-per-node", "2", "-t", "3", "--max_restarts=1"}));
  // Everything from PROGRAM on is the program's, even words that look like ours.
  EXPECT_EQ(options.command, (std::vector<std::string>{"train.py", "--hosts", "not-ours"}));
}

TEST(SshOptions, RefusesWhatItSetsAndTyposWithAHint) {
  EXPECT_NE(usage_error({"--hosts", "a", "--node-rank", "1", "x"}).find("--node-rank is set by dlaunch ssh"),
            std::string::npos);
  EXPECT_NE(usage_error({"--hosts", "a", "--rdzv-token", "s", "x"}).find("set by dlaunch ssh"),
            std::string::npos);
  EXPECT_NE(usage_error({"--hostfiel", "f", "x"}).find("Did you mean '--hostfile'?"), std::string::npos);
  EXPECT_NE(usage_error({"--hosts", "a"}).find("no PROGRAM"), std::string::npos);
  EXPECT_NE(usage_error({"x"}).find("--hosts H1,H2,... or --hostfile FILE"), std::string::npos);
  EXPECT_NE(usage_error({"--hosts", "a", "--connect-timeout", "0", "x"}).find("--connect-timeout"),
            std::string::npos);
}

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
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("<no error>");
  };
  EXPECT_NE(error({"UNSET_HERE"}, std::nullopt).find("UNSET_HERE is not set here"), std::string::npos);
  EXPECT_NE(error({"1BAD=x"}, std::nullopt).find("is not a variable name"), std::string::npos);
  EXPECT_NE(error({"DLAUNCH_RDZV_TOKEN=x"}, std::nullopt).find("rendezvous secret"), std::string::npos);
  EXPECT_NE(error({}, std::string("ok=1\nnot an assignment\n")).find("e.env:2"), std::string::npos);
}

TEST(SshPreflight, ReadsEachHostsAnswer) {
  JobPlan plan = sample_plan();
  std::vector<std::string> worker{"python3", "-u", "train.py"};
  std::string version = std::string("dlaunch-preflight: version dlaunch ") + DLAUNCH_VERSION + "\n";
  EXPECT_TRUE(interpret_preflight(plan, "h1", 0, version, "", worker).empty());
  auto unreachable = interpret_preflight(plan, "h2", 255, "", "ssh: connect to host h2 port 22: No route to host\n", worker);
  ASSERT_EQ(unreachable.size(), 1u);
  EXPECT_NE(unreachable[0].find("h2: unreachable over ssh: ssh: connect to host h2 port 22: No route"), std::string::npos);
  auto missing = interpret_preflight(plan, "h3", 0, "dlaunch-preflight: no-dlaunch\n", "", worker);
  EXPECT_NE(missing.at(0).find("h3: dlaunch is not at /opt/dlaunch there"), std::string::npos);
  auto old = interpret_preflight(plan, "h3", 0, "dlaunch-preflight: version dlaunch 0.0.1\n", "", worker);
  EXPECT_NE(old.at(0).find("runs 'dlaunch 0.0.1' but this machine runs"), std::string::npos);
  auto two = interpret_preflight(
      plan, "h1", 0, version + "dlaunch-preflight: no-program\ndlaunch-preflight: no-script train.py\n", "", worker);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_NE(two[0].find("cannot find 'python3' there"), std::string::npos);
  EXPECT_NE(two[1].find("the script train.py is missing there"), std::string::npos);
  EXPECT_NE(interpret_preflight(plan, "h1", -1, "", "", worker).at(0).find("did not answer within 27 s"),
            std::string::npos);
}

}  // namespace
}  // namespace dlaunch::ssh
