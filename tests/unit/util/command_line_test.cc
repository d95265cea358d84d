// Running a CLI11 parser the same way for every subcommand.
#include "util/command_line.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "../test_support/text.h"
#include "util/error.h"
#include "util/strings.h"

namespace dlaunch::util {
namespace {

using test_support::contains;

// A parser like dlaunch run's: options, then PROGRAM [ARGS...].
struct ProgramParser {
  CLI::App app{"test", "dlaunch test"};
  int count = 0;
  bool verbose = false;
  ProgramParser() {
    app.prefix_command();
    app.set_help_flag("-h,--help", "Show this help and exit");
    app.add_option("--count", count, "how many");
    app.add_flag("--verbose", verbose, "say more");
  }
};

TEST(CommandLine, ArgumentsAreParsedInTheirOrder) {
  ProgramParser parser;
  ASSERT_TRUE(parse_command_line(parser.app, {"--count", "3", "--verbose", "train.py", "--count", "9"},
                                 "dlaunch test"));
  EXPECT_EQ(parser.count, 3);
  EXPECT_TRUE(parser.verbose);
  EXPECT_EQ(program_after_options(parser.app), (std::vector<std::string>{"train.py", "--count", "9"}));
}

TEST(CommandLine, AMalformedCommandLineIsAUsageErrorNamingTheCommand) {
  ProgramParser parser;
  try {
    parse_command_line(parser.app, {"--count", "many", "x"}, "dlaunch test");
    FAIL() << "a malformed count was accepted";
  } catch (const UsageError& error) {
    std::string message = error.what();
    EXPECT_EQ(message.rfind("dlaunch test: ", 0), 0u) << message;
    EXPECT_NE(message.find("--count"), std::string::npos) << message;
    EXPECT_NE(message.find(". 'dlaunch test --help' lists the options."), std::string::npos) << message;
  }
}

TEST(CommandLine, HelpIsPrintedAndParsingStops) {
  ProgramParser parser;
  ::testing::internal::CaptureStdout();
  bool parsed = parse_command_line(parser.app, {"--help"}, "dlaunch test");
  std::string help = ::testing::internal::GetCapturedStdout();
  EXPECT_FALSE(parsed);
  EXPECT_NE(help.find("--count"), std::string::npos) << help;
  EXPECT_NE(help.find("say more"), std::string::npos) << help;
}

TEST(CommandLine, ADoubleDashEndsTheOptionsAndIsDropped) {
  ProgramParser parser;
  ASSERT_TRUE(parse_command_line(parser.app, {"--verbose", "--", "-weird-program", "-x"}, "dlaunch test"));
  EXPECT_EQ(program_after_options(parser.app), (std::vector<std::string>{"-weird-program", "-x"}));
}

// Every parser suggests the nearest option for a typo, also before PROGRAM
// (where CLI11 would take the unknown option for the program).
std::string usage_error(CLI::App& app, const std::vector<std::string>& args) {
  try {
    parse_command_line(app, args, "dlaunch test");
  } catch (const UsageError& error) {
    return error.what();
  }
  return "<no error>";
}

TEST(CommandLine, AnUnknownOptionBeforeTheProgramGetsTheNearestOne) {
  ProgramParser parser;
  std::string message = usage_error(parser.app, {"--verbose", "--cuont=3", "train.py"});
  EXPECT_NE(message.find("unknown option '--cuont' for dlaunch test. Did you mean '--count'? Put '--' "
                         "before a PROGRAM whose name starts with '-'; 'dlaunch test --help' lists the "
                         "options."),
            std::string::npos)
      << message;
  // The program's own options are its own.
  ProgramParser program;
  EXPECT_EQ(usage_error(program.app, {"train.py", "--cuont", "3"}), "<no error>");
}

TEST(CommandLine, AnUnknownOptionWithoutAProgramGetsTheNearestOne) {
  CLI::App app{"test", "dlaunch test"};
  int iters = 0;
  app.add_option("--iters", iters, "how many")->type_name("N");
  std::string message = usage_error(app, {"--itres", "3"});
  EXPECT_NE(message.find("unknown option '--itres' for dlaunch test. Did you mean '--iters'?"), std::string::npos)
      << message;
  EXPECT_EQ(message.find("PROGRAM"), std::string::npos) << message;
  // Underscores for dashes, as torchrun spells its options, find the dashed one.
  EXPECT_EQ(closest_option(app, "--it_ers"), "--iters");
  EXPECT_EQ(closest_option(app, "--completely-different"), std::nullopt);
}

// mpirun's, Horovod's and DeepSpeed's spellings get dlaunch's, or the
// command that has it.
TEST(CommandLine, OtherLaunchersSpellingsGetDlaunchs) {
  CLI::App app{"test", "dlaunch test"};
  std::string value;
  app.add_option("--nproc-per-node", value, "workers")->type_name("N");
  app.add_option("--nnodes", value, "nodes")->type_name("N");
  EXPECT_TRUE(contains(usage_error(app, {"-np", "4"}), "unknown option '-np' for dlaunch test. Did you mean "
                                                       "'--nproc-per-node'? dlaunch counts workers per node"));
  EXPECT_TRUE(contains(usage_error(app, {"--num_gpus=4"}), "Did you mean '--nproc-per-node'?"));
  EXPECT_TRUE(contains(usage_error(app, {"--num_nodes", "2"}), "Did you mean '--nnodes'?"));
  EXPECT_TRUE(contains(usage_error(app, {"-H", "a:4"}), "That is an option of 'dlaunch ssh --hosts"));
  EXPECT_TRUE(contains(usage_error(app, {"--partition", "gpu"}), "That is an option of 'dlaunch submit'"));
  CLI::App submit{"test", "dlaunch submit"};
  submit.add_option("--sbatch-arg", value, "for sbatch")->type_name("ARG");
  EXPECT_TRUE(contains(usage_error(submit, {"--reservation", "r1"}), "--sbatch-arg=--reservation=VALUE"));
}

// torch.distributed.launch's leftovers get what to do, never a look-alike
// option ("--local-rank" is not "--node-rank").
TEST(CommandLine, TorchrunLeftoversAreToldToGo) {
  CLI::App app{"test", "dlaunch test"};
  std::string value;
  app.add_option("--node-rank", value, "rank of this node")->type_name("N");
  for (const char* leftover : {"--local-rank=0", "--local_rank", "--use-env", "--use_env"}) {
    std::string message = usage_error(app, {leftover, "0"});
    EXPECT_TRUE(contains(message, "Drop it: dlaunch sets LOCAL_RANK")) << message;
    EXPECT_FALSE(contains(message, "--node-rank")) << message;
  }
}

// CLI11's "job is required" names the argument, says what it is and shows the usage.
TEST(CommandLine, AMissingArgumentIsNamedWithTheUsage) {
  CLI::App app{"test", "dlaunch test"};
  set_usage(app, "dlaunch test [options] JOB");
  std::string job;
  app.add_option("job", job, "A Slurm job id or 'last'")->required()->type_name("JOB");
  finish_help(app, {});
  EXPECT_EQ(usage_error(app, {}),
            "dlaunch test: JOB is missing: A Slurm job id or 'last'. Usage: dlaunch test [options] JOB. "
            "'dlaunch test --help' says more.");
}

TEST(CommandLine, TheHelpHasHeadingsPlaceholdersAndExamplesLast) {
  CLI::App app{"Does a test.", "dlaunch test"};
  int count = 0;
  std::string where;
  bool verbose = false;
  set_usage(app, "dlaunch test [options] PROGRAM");
  app.add_option("--count", count, "how many")->group("Numbers")->type_name("N")->check(CLI::Range(1, 9));
  app.add_option("--where-to,--where_to", where, "where to")->group("Places")->type_name("DIR");
  app.add_flag("--verbose", verbose, "say more")->group("Numbers");
  finish_help(app, {{"dlaunch test --count 2 x", "counts two"}, {"dlaunch test y", "counts none"}});
  std::string help = app.help();
  EXPECT_EQ(help.rfind("Usage: dlaunch test [options] PROGRAM\n\nDoes a test.\n", 0), 0u) << help;
  auto at = [&](const std::string& part) { return help.find(part); };
  EXPECT_LT(at("Numbers:\n  --count N "), at("  --verbose "));
  EXPECT_LT(at("  --verbose "), at("Places:\n  --where-to DIR "));
  EXPECT_LT(at("Places:"), at("Help:\n  -h, --help "));
  EXPECT_LT(at("Help:"), at("Examples:\n  dlaunch test --count 2 x\n      counts two\n  dlaunch test y\n"));
  // No CLI11 type names, no check descriptions, no underscore twins, no blank line pairs.
  for (const char* absent : {"TEXT", "INT", "[1 - 9]", "--where_to", "\n\n\n"})
    EXPECT_EQ(at(absent), std::string::npos) << absent << " in\n" << help;
}

TEST(CommandLine, LongDescriptionsWrapAtEightyColumns) {
  CLI::App app{"test", "dlaunch test"};
  set_usage(app, "dlaunch test");
  app.add_flag("--long")
      ->description(std::string(40, 'x') + " " + std::string(30, 'y') + " " + std::string(30, 'z'))
      ->group("Group");
  finish_help(app, {});
  std::string help = app.help();
  for (const auto& line : split(help, '\n')) EXPECT_LE(line.size(), 80u) << line;
  EXPECT_NE(help.find("\n" + std::string(30, ' ') + std::string(30, 'y')), std::string::npos) << help;
}

TEST(CommandLine, NoProgramIsAnEmptyOne) {
  ProgramParser parser;
  ASSERT_TRUE(parse_command_line(parser.app, {"--count", "1"}, "dlaunch test"));
  EXPECT_EQ(program_after_options(parser.app), std::vector<std::string>{});
}

}  // namespace
}  // namespace dlaunch::util
