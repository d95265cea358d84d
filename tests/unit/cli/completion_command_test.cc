// dlaunch completion: scripts that know every command and its options,
// written from the parsers; and every command keeps the help conventions
// of util/command_line.h, which the scripts rely on.
#include "cli/completion_command.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "../test_support/temp_dir.h"
#include "../test_support/text.h"
#include "cli/dlaunch_main.h"
#include "util/error.h"
#include "util/subprocess.h"

namespace dlaunch::cli {
namespace {

using test_support::contains;

struct Result {
  int code;
  std::string out;
};

// `dlaunch ARGS...` through the command itself (dlaunch_main would also
// finish the console, which the other tests of this binary still use).
Result run(const std::vector<std::string>& args) {
  ::testing::internal::CaptureStdout();
  int code = completion_command(CommandArgs(args.begin() + 1, args.end()), command_table());
  return {code, ::testing::internal::GetCapturedStdout()};
}

std::vector<std::string> public_commands() {
  std::vector<std::string> names;
  for (const Command& command : command_table()) {
    if (is_public(command)) names.emplace_back(command.name);
  }
  return names;
}

TEST(Completion, EveryShellKnowsEveryCommand) {
  for (const char* shell : {"bash", "zsh", "fish"}) {
    Result script = run({"completion", shell});
    EXPECT_EQ(script.code, 0) << shell;
    for (const auto& name : public_commands()) EXPECT_TRUE(contains(script.out, name)) << shell;
    for (const char* option : {"nproc-per-node", "sweep", "hostfile", "max-bytes", "rdzv-token-file"})
      EXPECT_TRUE(contains(script.out, option)) << shell << " " << option;
    EXPECT_FALSE(contains(script.out, "__dump-python")) << shell;
  }
}

TEST(Completion, FixedValuesAreOffered) {
  std::string bash = run({"completion", "bash"}).out;
  EXPECT_TRUE(contains(bash, "'submit --launch') choices='node task'"));
  EXPECT_TRUE(contains(bash, "'run --redirects') choices='0 1 2 3'"));
  EXPECT_TRUE(contains(bash, "words='bash zsh fish'"));
  EXPECT_TRUE(contains(run({"completion", "zsh"}).out,
                       "--launch'[node\\: one dlaunch run per node]:node|task:(node task)'"));
  EXPECT_TRUE(contains(run({"completion", "fish"}).out, "-l launch -x -a 'node task'"));
}

// Runs bash with the script loaded and the words typed so far, and prints
// what it would offer.
std::string bash_completes(const std::string& script_path, const std::string& words) {
  std::string program = "source '" + script_path + "'; COMP_WORDS=(" + words +
                        "); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _dlaunch; echo \"${COMPREPLY[*]}\"";
  util::CapturedRun bash = util::run_captured({"bash", "-c", program});
  EXPECT_EQ(bash.exit_code, 0) << bash.err;
  return bash.out;
}

TEST(Completion, BashCompletesCommandsOptionsAndValues) {
  test_support::TempDir folder;
  std::string path = folder.path() + "/dlaunch.bash";
  std::ofstream(path) << run({"completion", "bash"}).out;
  EXPECT_EQ(bash_completes(path, "dlaunch su"), "submit\n");
  EXPECT_EQ(bash_completes(path, "dlaunch run --nproc-per"), "--nproc-per-node\n");
  EXPECT_EQ(bash_completes(path, "dlaunch submit --sw"), "--sweep\n");
  EXPECT_EQ(bash_completes(path, "dlaunch submit --launch ''"), "node task\n");
  EXPECT_EQ(bash_completes(path, "dlaunch hostlist c"), "compress count\n");
  EXPECT_EQ(bash_completes(path, "dlaunch help comp"), "completion\n");
  // After PROGRAM the words are the program's: nothing of dlaunch's is offered.
  EXPECT_EQ(bash_completes(path, "dlaunch run train.py --no"), "\n");
}

TEST(Completion, AnUnknownShellIsAUsageError) {
  try {
    completion_command({"tcsh"}, command_table());
    FAIL() << "tcsh was accepted";
  } catch (const util::UsageError& error) {
    EXPECT_TRUE(contains(error.what(), "unknown shell 'tcsh'; expected one of bash, zsh, fish"));
  }
}

// What the scripts and the help rely on: each command describes its
// command line, and every value has a typed placeholder, not CLI11's.
TEST(Completion, EveryCommandDescribesItsOptionsWithPlaceholders) {
  const std::set<std::string> cli11_names = {"TEXT", "INT", "UINT", "FLOAT", "NUMBER", "BOOLEAN", "ENUM"};
  for (const Command& command : command_table()) {
    if (!is_public(command)) continue;
    ASSERT_NE(command.command_line, nullptr) << command.name << " has no command_line in the table";
    util::CommandLineSpec line = command.command_line();
    EXPECT_FALSE(line.options.empty()) << command.name;  // at least --help
    for (const util::OptionSpec& option : line.options) {
      EXPECT_FALSE(option.names.empty()) << command.name;
      if (!option.takes_value) continue;
      EXPECT_FALSE(option.placeholder.empty()) << command.name << " " << option.names.front();
      EXPECT_EQ(cli11_names.count(option.placeholder), 0u) << command.name << " " << option.names.front();
      EXPECT_FALSE(contains(option.placeholder, ":INT")) << command.name << " " << option.names.front();
    }
  }
}

}  // namespace
}  // namespace dlaunch::cli
