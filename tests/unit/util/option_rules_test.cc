// The rules every command's options follow (util/option_rules.h): a flag
// takes no value, a one-value option given twice must agree with itself,
// and both hold through util::parse_command_line for every command.
#include "util/option_rules.h"

#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "../test_support/text.h"
#include "util/command_line.h"
#include "util/error.h"

namespace dlaunch::util {
namespace {

using test_support::contains;

// A parser shaped like dlaunch run's and submit's: one-value options (long,
// underscore and short spellings), a list option, flags, then PROGRAM.
struct RuleParser {
  CLI::App app{"test", "dlaunch test"};
  std::string log_dir, tee;
  std::vector<std::string> setup;
  int nodes = 0;
  bool gate = false, standalone = false;
  RuleParser() {
    app.prefix_command();
    app.add_option("-N,--nodes", nodes, "how many")->group("Slurm")->type_name("N");
    app.add_option("--log-dir,--log_dir", log_dir, "where")->group("Output")->type_name("DIR");
    app.add_option("-t,--tee", tee, "streams")->group("Output")->type_name("0|1|2|3");
    // As dlaunch submit's lists: one word a use.
    app.add_option("--setup", setup, "a line")->group("Slurm")->type_name("LINE")->allow_extra_args(false);
    app.add_flag("--gate", gate, "check first")->group("Reliability");
    app.add_flag("--standalone", standalone, "one node")->group("Topology");
    finish_help(app, {});
  }
};

// What parse_command_line answers ARGS with: its UsageError, or "<accepted>".
std::string answer(RuleParser& parser, const std::vector<std::string>& args) {
  try {
    parse_command_line(parser.app, args, "dlaunch test");
  } catch (const UsageError& error) {
    return error.what();
  }
  return "<accepted>";
}

std::string answer(const std::vector<std::string>& args) {
  RuleParser parser;
  return answer(parser, args);
}

TEST(OptionRules, AFlagGivenAValueIsRefusedNamingTheFlagAndBothWaysToSayIt) {
  // CLI11 alone would turn --gate=no on and read --standalone=false as true.
  EXPECT_EQ(answer({"--gate=no", "train.py"}),
            "dlaunch test: --gate is a flag and takes no value, got '--gate=no'; give --gate to turn it on, or "
            "leave it out to keep it off.");
  EXPECT_TRUE(contains(answer({"--standalone=false", "train.py"}), "--standalone is a flag and takes no value"));
  EXPECT_TRUE(contains(answer({"--gate=true", "train.py"}), "got '--gate=true'"));
  // The neighbours: a bare flag, a valued option with '=', and a program's own flag with a value.
  RuleParser bare;
  EXPECT_EQ(answer(bare, {"--gate", "--log-dir=logs", "train.py", "--gate=no"}), "<accepted>");
  EXPECT_TRUE(bare.gate);
  EXPECT_EQ(bare.log_dir, "logs");
}

TEST(OptionRules, AOneValueOptionGivenTwiceWithDifferentValuesIsRefusedNamingBoth) {
  EXPECT_EQ(answer({"--nodes", "4", "--nodes=2", "train.py"}),
            "dlaunch test: --nodes is given twice with different values, '--nodes 4' and '--nodes=2'; it takes "
            "one: keep the one you mean and drop the other.");
  // Every spelling of one option is the same option.
  EXPECT_TRUE(contains(answer({"--log-dir", "a", "--log_dir", "b", "train.py"}), "'--log-dir a' and '--log_dir b'"));
  EXPECT_TRUE(contains(answer({"-N", "2", "--nodes", "3", "train.py"}), "'-N 2' and '--nodes 3'"));
  EXPECT_TRUE(contains(answer({"-t3", "--tee", "1", "train.py"}), "'-t3' and '--tee 1'"));
}

TEST(OptionRules, TheSameValueTwiceAListOptionAndAProgramsOwnWordsAreAccepted) {
  RuleParser same;
  // CLI11 alone answers a one-value option given twice with "At Most 1 required".
  EXPECT_EQ(answer(same, {"--nodes", "2", "--nodes=2", "train.py"}), "<accepted>");
  EXPECT_EQ(same.nodes, 2);
  RuleParser list;
  EXPECT_EQ(answer(list, {"--setup", "a", "--setup", "b", "train.py"}), "<accepted>");
  EXPECT_EQ(list.setup, (std::vector<std::string>{"a", "b"}));
  // Words after PROGRAM are the program's: its --nodes may differ from ours.
  EXPECT_EQ(answer({"--nodes", "2", "train.py", "--nodes", "3"}), "<accepted>");
  EXPECT_EQ(answer({"--nodes", "2", "--", "train.py", "--nodes", "3"}), "<accepted>");
}

}  // namespace
}  // namespace dlaunch::util
