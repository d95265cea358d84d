// dlaunch hostlist: the command line around the hostlist grammar.
#include "cli/hostlist_command.h"

#include <gtest/gtest.h>

#include <iostream>
#include <sstream>
#include <string>

#include "../test_support/text.h"
#include "util/error.h"

namespace dlaunch::cli {
namespace {

using test_support::contains;

std::string run_capturing_stdout(const CommandArgs& args) {
  ::testing::internal::CaptureStdout();
  try {
    EXPECT_EQ(hostlist_command(args), 0);
  } catch (...) {
    ::testing::internal::GetCapturedStdout();
    throw;
  }
  return ::testing::internal::GetCapturedStdout();
}

std::string usage_error(const CommandArgs& args) {
  try {
    hostlist_command(args);
  } catch (const util::UsageError& error) {
    return error.what();
  }
  return "";
}

TEST(HostlistCommand, ExpandPrintsOneHostPerLineForAllExpressions) {
  EXPECT_EQ(run_capturing_stdout({"expand", "n[1-2],m1", "[3-4]"}), "n1\nn2\nm1\n3\n4\n");
  EXPECT_EQ(run_capturing_stdout({"expand", ""}), "");
}

TEST(HostlistCommand, CompressTreatsAllArgumentsAsOneList) {
  EXPECT_EQ(run_capturing_stdout({"compress", "n1", "n2,n3", "n[4-5]"}), "n[1-5]\n");
  EXPECT_EQ(run_capturing_stdout({"compress", ""}), "\n");
}

TEST(HostlistCommand, FirstAndCount) {
  EXPECT_EQ(run_capturing_stdout({"first", "", "n[7-65536]x[1-65536]"}), "n7x1\n");
  EXPECT_EQ(run_capturing_stdout({"count", "n[1-65536]x[1-65536]", "m1,m1"}), "4294967298\n");
  EXPECT_THROW(hostlist_command({"first", " "}), util::InputError);
}

TEST(HostlistCommand, DashReadsExpressionsFromStdin) {
  std::istringstream input("n3 n4\nn[5-6]\n");
  std::streambuf* saved = std::cin.rdbuf(input.rdbuf());
  std::string output = run_capturing_stdout({"compress", "n[1-2]", "-", "n7"});
  std::cin.rdbuf(saved);
  EXPECT_EQ(output, "n[1-7]\n");
}

TEST(HostlistCommand, DoubleDashEndsOptions) {
  EXPECT_EQ(run_capturing_stdout({"expand", "--", "-x"}), "-x\n");
}

TEST(HostlistCommand, UnknownActionSuggestsTheClosestOne) {
  EXPECT_TRUE(contains(usage_error({"expnad", "n1"}), "did you mean 'expand'?"));
  EXPECT_TRUE(contains(usage_error({"compres", "n1"}), "did you mean 'compress'?"));
  EXPECT_TRUE(contains(usage_error({"zzzzzzzz", "n1"}), "unknown action 'zzzzzzzz'"));
  EXPECT_TRUE(contains(usage_error({}), "no action"));
  EXPECT_TRUE(contains(usage_error({"count"}), "no expression"));
  EXPECT_TRUE(contains(usage_error({"expand", "--bogus"}), "unknown option '--bogus'"));
}

TEST(HostlistCommand, BadExpressionIsAnInputErrorAndPrintsNothing) {
  ::testing::internal::CaptureStdout();
  EXPECT_THROW(hostlist_command({"expand", "n[1-2]", "n[5-3]"}), util::InputError);
  EXPECT_EQ(::testing::internal::GetCapturedStdout(), "");
}

TEST(HostlistCommand, HelpMentionsTheActions) {
  std::string help = run_capturing_stdout({"--help"});
  EXPECT_TRUE(contains(help, "compress"));
  EXPECT_TRUE(contains(help, "scontrol"));
}

}  // namespace
}  // namespace dlaunch::cli
