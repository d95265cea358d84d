// A command line as data, taken from its CLI11 parser, for the completion scripts.
#include "util/command_line_spec.h"

#include <gtest/gtest.h>

#include <CLI/CLI.hpp>

#include "util/command_line.h"

namespace dlaunch::util {
namespace {

TEST(CommandLineSpec, OptionsInHelpOrderWithTheirPlaceholders) {
  CLI::App app{"test", "dlaunch test"};
  int nodes = 0;
  std::string launch;
  bool wait = false;
  int hidden = 0;
  app.prefix_command();
  app.add_option("-N,--nodes,--no_des", nodes, "Number of nodes")->group("Topology")->type_name("N")
      ->check(CLI::Range(1, 64));
  app.add_option("--launch", launch, "How")->group("Job")->type_name("node|task");
  app.add_flag("--wait,--follow", wait, "Wait")->group("Topology");
  app.add_option("--inject", hidden)->group("");
  finish_help(app, {});
  CommandLineSpec spec = describe_command_line(app);
  EXPECT_TRUE(spec.takes_program);
  ASSERT_EQ(spec.options.size(), 4u);  // --nodes, --wait, --launch, --help: not the hidden one
  EXPECT_EQ(spec.options[0].names, (std::vector<std::string>{"-N", "--nodes", "--no_des"}));
  EXPECT_TRUE(spec.options[0].takes_value);
  EXPECT_EQ(spec.options[0].placeholder, "N");  // not "N:INT in [1 - 64]"
  EXPECT_EQ(spec.options[0].help, "Number of nodes");
  EXPECT_EQ(spec.options[1].names, (std::vector<std::string>{"--wait", "--follow"}));
  EXPECT_FALSE(spec.options[1].takes_value);
  EXPECT_EQ(spec.options[2].placeholder, "node|task");
  EXPECT_EQ(spec.options[3].names, (std::vector<std::string>{"-h", "--help"}));
}

TEST(CommandLineSpec, UnderscoreTwinsAreNotShown) {
  CLI::App app{"test", "dlaunch test"};
  app.add_option("--nproc-per-node,--nproc_per_node")->group("G");
  EXPECT_EQ(describe_command_line(app).options.back().names, std::vector<std::string>{"--nproc-per-node"});
}

TEST(CommandLineSpec, APlaceholderFixesItsLowerCaseWords) {
  EXPECT_EQ(placeholder_choices("node|task"), (std::vector<std::string>{"node", "task"}));
  EXPECT_EQ(placeholder_choices("0|1|2|3|MAP"), (std::vector<std::string>{"0", "1", "2", "3"}));
  EXPECT_EQ(placeholder_choices("N|gpu|cpu|auto"), (std::vector<std::string>{"gpu", "cpu", "auto"}));
  EXPECT_TRUE(placeholder_choices("N").empty());
  EXPECT_TRUE(placeholder_choices("HOST:PORT").empty());
  EXPECT_TRUE(placeholder_choices("file").empty());  // a single word is a name, not a choice
}

}  // namespace
}  // namespace dlaunch::util
