// Running a CLI11 parser the same way for every subcommand.
#include "util/command_line.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "util/error.h"

namespace dlaunch::util {
namespace {

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

TEST(CommandLine, AnUnknownOptionBeforeTheProgramIsNoProgram) {
  ProgramParser parser;
  ASSERT_TRUE(parse_command_line(parser.app, {"--verbose", "--cuont", "3", "train.py"}, "dlaunch test"));
  EXPECT_EQ(program_after_options(parser.app), std::nullopt);
  EXPECT_EQ(parser.app.remaining().front(), "--cuont");  // for the caller's message
}

TEST(CommandLine, NoProgramIsAnEmptyOne) {
  ProgramParser parser;
  ASSERT_TRUE(parse_command_line(parser.app, {"--count", "1"}, "dlaunch test"));
  EXPECT_EQ(program_after_options(parser.app), std::vector<std::string>{});
}

}  // namespace
}  // namespace dlaunch::util
