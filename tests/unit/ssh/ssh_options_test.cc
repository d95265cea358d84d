// dlaunch ssh's command line: what goes to every host, and what it refuses.
#include "ssh/ssh_options.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "util/error.h"

namespace dlaunch::ssh {
namespace {

SshOptions parse(std::vector<std::string> args) { return *parse_ssh_options(args); }

std::string usage_error(std::vector<std::string> args) {
  try {
    parse_ssh_options(args);
  } catch (const util::InputError& error) {
    return error.what();
  }
  return "<no error>";
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

// A value left out is refused as by every command (util/missing_value.h),
// for ssh's own options and the run options it passes on; --ssh-arg's
// value may be a short option, as the README's `--ssh-arg -F` is.
TEST(SshOptions, AValueLeftOutNeverTakesTheNextOption) {
  EXPECT_NE(usage_error({"--hosts", "--nnodes", "2", "x"})
                .find("dlaunch ssh: --hosts needs a value (HOSTS), got the option --nnodes"),
            std::string::npos);
  EXPECT_NE(usage_error({"--hosts", "a", "--log-dir", "--tee", "3", "x"})
                .find("dlaunch ssh: --log-dir needs a value (DIR), got the option --tee"),
            std::string::npos);
  EXPECT_NE(usage_error({"--hosts", "a", "--ssh-arg", "--verbose", "x"}).find("write --ssh-arg=--verbose"),
            std::string::npos);
  auto options = parse({"--hosts", "a", "--ssh-arg", "-F", "--ssh-arg", "cfg", "--ssh-arg", "-t", "x"});
  EXPECT_EQ(options.ssh_args, (std::vector<std::string>{"-F", "cfg", "-t"}));
}

// A second --hosts would drop the first one's hosts without a word.
TEST(SshOptions, OneHostListOnly) {
  EXPECT_NE(usage_error({"--hosts", "a,b", "--hosts", "c", "x"})
                .find("--hosts is given twice ('a,b', then 'c'); dlaunch ssh takes one list: give all of it in one "
                      "--hosts (e.g. --hosts a,b,c)"),
            std::string::npos);
  EXPECT_NE(usage_error({"--hostfile", "f", "--hostfile=g", "x"}).find("--hostfile is given twice"), std::string::npos);
}

TEST(SshOptions, NnodesSaysHowManyHostsTrain) {
  EXPECT_FALSE(parse({"--hosts", "a,b,c", "train.py"}).nnodes);  // every host trains
  auto options = parse({"--hosts", "a,b,c", "--nnodes", "2", "train.py"});
  EXPECT_EQ(options.nnodes, 2);
  // Taken by dlaunch ssh, not passed on: each host gets its own --nnodes.
  EXPECT_TRUE(options.run_args.empty());
  EXPECT_NE(usage_error({"--hosts", "a,b", "--nnodes", "0", "x"}).find("--nnodes must be an integer from 1"),
            std::string::npos);
  EXPECT_NE(usage_error({"--hosts", "a,b", "--nnodes", "two", "x"}).find("--nnodes"), std::string::npos);
}

}  // namespace
}  // namespace dlaunch::ssh
