// dlaunch submit's command line: the flags as typed, each with the flag as
// its source, so a refusal names the flag to fix.
#include "submit/submit_options.h"

#include <algorithm>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "flag_settings.h"
#include "submit/job_script.h"
#include "util/error.h"

namespace dlaunch::submit {
namespace {

using test_support::error_of;

TEST(SubmitOptions, SignalAndRequeueFlags) {
  auto options = parse_submit_options({"--signal", "USR1@90", "--requeue", "train.py", "--lr", "1"});
  ASSERT_TRUE(options);
  EXPECT_EQ(options->flags.string("signal"), "USR1@90");
  EXPECT_EQ(options->flags.find("signal")->source, "--signal");
  EXPECT_TRUE(options->flags.flag("requeue"));
  EXPECT_EQ(options->flags.find("requeue")->source, "--requeue");
  EXPECT_EQ(options->command, (std::vector<std::string>{"train.py", "--lr", "1"}));

  options = parse_submit_options({"--signal=R:USR2@600", "train.py"});
  ASSERT_TRUE(options);
  EXPECT_EQ(options->flags.string("signal"), "R:USR2@600");
  EXPECT_FALSE(options->flags.flag("requeue"));
  EXPECT_EQ(options->flags.find("requeue"), nullptr);  // not given: the lower layers decide
}

// The shell split `--sweep lr=0.1 0.01` in two: refused as a usage error
// (exit 2) before anything is submitted, pointing at the comma.
TEST(SubmitOptions, ASweepValueAfterASpaceIsNotTakenForTheProgram) {
  try {
    parse_submit_options({"--sweep", "lr=0.1", "0.01", "train.py"});
    ADD_FAILURE() << "accepted 0.01 as the program";
  } catch (const util::UsageError& error) {
    EXPECT_THAT(error.what(), ::testing::HasSubstr("Give --sweep lr=0.1,0.01"));
  }
  auto options = parse_submit_options({"--sweep=lr=0.1,0.01", "train.py", "0.5"});
  ASSERT_TRUE(options);
  EXPECT_EQ(options->command, (std::vector<std::string>{"train.py", "0.5"}));
}

// The flags as typed reach the job request with the flag as their source, so
// a refusal says which flag to fix.
TEST(SubmitOptions, ControlCharactersInFlagsAreRefusedNamingTheFlag) {
  for (const char* flag : {"--job-name", "--partition", "--sbatch-arg", "--output-dir", "--time"}) {
    auto options = parse_submit_options({flag, "x\ntouch /tmp/pwned", "train.py"});
    ASSERT_TRUE(options);
    SubmitSettings merged = default_submit_settings();
    for (const auto& [name, value] : options->flags.values()) merged.set(name, value.value, value.source);
    std::string message = error_of(merged);
    EXPECT_NE(message.find(std::string(flag).substr(2) + " (from " + flag + ") contains a newline"),
              std::string::npos)
        << message;
  }
  // Where a newline is legal: the program's own arguments.
  auto options = parse_submit_options({"--run-arg=--prefix=a\nb", "train.py", "x\ny"});
  ASSERT_TRUE(options);
  EXPECT_EQ(options->command, (std::vector<std::string>{"train.py", "x\ny"}));
  EXPECT_EQ(error_of(options->flags), "no error");
}

TEST(SubmitOptions, SbatchsShortSpellingsMeanTheSame) {
  auto options = parse_submit_options(
      {"-N", "2", "-p", "gpu", "-t", "1:00:00", "-J", "big", "-A", "proj", "-q", "high", "-C", "a100", "train.py"});
  ASSERT_TRUE(options);
  EXPECT_EQ(options->flags.integer("nodes"), 2);
  EXPECT_EQ(options->flags.string("partition"), "gpu");
  EXPECT_EQ(options->flags.string("time"), "1:00:00");
  EXPECT_EQ(options->flags.string("job-name"), "big");
  EXPECT_EQ(options->flags.string("account"), "proj");
  EXPECT_EQ(options->flags.string("qos"), "high");
  EXPECT_EQ(options->flags.string("constraint"), "a100");
  EXPECT_EQ(options->command, (std::vector<std::string>{"train.py"}));
}

// -G is sbatch's --gpus: the job's GPUs, spread evenly over the training nodes.
TEST(SubmitOptions, DashGCountsTheJobsGpus) {
  auto options = parse_submit_options({"-N", "2", "-G", "8", "train.py"});
  ASSERT_TRUE(options);
  EXPECT_EQ(options->flags.integer("gpus"), 8);
  SubmitSettings merged = default_submit_settings();
  for (const auto& [name, value] : options->flags.values()) merged.set(name, value.value, value.source);
  EXPECT_EQ(test_support::request_for(merged).gpus_per_node, 4);
}

TEST(SubmitOptions, GpusMustSplitEvenlyAndNotContradictGpusPerNode) {
  EXPECT_THAT(test_support::error_of(test_support::with({{"nodes", std::int64_t{2}}, {"gpus", std::int64_t{3}}})),
              ::testing::HasSubstr("must split evenly over the 2 training node(s)"));
  EXPECT_THAT(test_support::error_of(
                  test_support::with({{"gpus", std::int64_t{8}}, {"gpus-per-node", std::int64_t{4}}})),
              ::testing::HasSubstr("both say how many GPUs"));
}

}  // namespace
}  // namespace dlaunch::submit

namespace dlaunch::submit {
namespace {

// One range per integer setting, the same message however the value is
// wrong and wherever it was given (a flag here, dlaunch.toml in config_file_test).
TEST(SubmitOptions, AnIntegerOutOfItsRangeGetsOneMessage) {
  auto message_for = [](const std::string& value) {
    try {
      parse_submit_options({"--nodes", value, "train.py"});
    } catch (const util::InputError& error) {
      return std::string(error.what());
    }
    return std::string("<accepted>");
  };
  EXPECT_EQ(message_for("-1"), "--nodes must be an integer from 1 to 16384, got -1");
  EXPECT_EQ(message_for("0"), "--nodes must be an integer from 1 to 16384, got 0");
  EXPECT_EQ(message_for("two"), "--nodes must be an integer from 1 to 16384, got 'two'");
  EXPECT_EQ(message_for("16385"), "--nodes must be an integer from 1 to 16384, got 16385");
  EXPECT_EQ(message_for("4"), "<accepted>");
  for (const auto& key : submit_keys()) {
    if (key.kind != ValueKind::kInteger) continue;
    EXPECT_LE(key.range.low, key.range.high) << key.name;
    EXPECT_GE(key.range.low, 0) << key.name << ": no count or duration of dlaunch submit is negative";
  }
}

// A dlaunch run option submit has no setting for goes to the nodes with
// --run-arg; sbatch would refuse it too.
TEST(SubmitOptions, ARunOptionIsAdvisedToGoThroughRunArg) {
  auto refusal = [](std::vector<std::string> args) {
    return test_support::input_error_of([&] { parse_submit_options(args); });
  };
  std::string message = refusal({"--console-overflow", "drop", "train.py"});
  EXPECT_NE(message.find("Pass it to the nodes with --run-arg=--console-overflow=drop"), std::string::npos) << message;
  EXPECT_EQ(message.find("--sbatch-arg"), std::string::npos) << message;
  EXPECT_NE(refusal({"--nodes", "2", "--bench-cooldown=1h", "train.py"}).find("--run-arg=--bench-cooldown=1h"),
            std::string::npos);
  // After the program it is the program's.
  EXPECT_EQ(refusal({"train.py", "--console-overflow", "drop"}), "no error");
  // What the step decides keeps the parser's hint (--gpus-per-node for --nproc-per-node).
  EXPECT_NE(refusal({"--nproc-per-node", "4", "train.py"}).find("--gpus-per-node"), std::string::npos);
}

TEST(SubmitOptions, RetryRepeatedFailuresIsASettingForTheNodes) {
  auto options = parse_submit_options({"--retry-repeated-failures", "--max-restarts", "3", "train.py"});
  ASSERT_TRUE(options.has_value());
  EXPECT_TRUE(options->flags.flag("retry-repeated-failures"));
  auto run_args = test_support::request_for(options->flags).run_args;
  EXPECT_NE(std::find(run_args.begin(), run_args.end(), "--retry-repeated-failures"), run_args.end());
}

}  // namespace
}  // namespace dlaunch::submit
