// dlaunch check's entry: its options, who the worker is from the launcher's
// variables, and the check it picks, run in-process as a group of one
// (rank 0 of 1 over loopback; a larger group needs one process per rank,
// each with its own variables, which tests/integration covers).
#include "check/run_check.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "../test_support/text.h"
#include "util/error.h"
#include "util/ports.h"

namespace dlaunch::check {
namespace {

using test_support::contains;

// Sets the variables a launcher gives a worker (VALUES; nullopt unsets
// one) while it lives, and puts back what was there.
class Variables {
 public:
  explicit Variables(const std::vector<std::pair<const char*, std::optional<std::string>>>& values) {
    for (const auto& [name, value] : values) {
      const char* old = std::getenv(name);
      saved_.push_back({name, old ? std::optional<std::string>(old) : std::nullopt});
      if (value) ::setenv(name, value->c_str(), 1);
      else ::unsetenv(name);
    }
  }
  ~Variables() {
    for (const auto& [name, value] : saved_) {
      if (value) ::setenv(name, value->c_str(), 1);
      else ::unsetenv(name);
    }
  }
  Variables(const Variables&) = delete;
  Variables& operator=(const Variables&) = delete;

 private:
  std::vector<std::pair<const char*, std::optional<std::string>>> saved_;
};

// Rank 0 of a group of one, words instead of marks (LC_ALL=C).
Variables group_of_one() {
  return Variables({{"RANK", "0"},
                    {"WORLD_SIZE", "1"},
                    {"LOCAL_RANK", "0"},
                    {"MASTER_ADDR", "127.0.0.1"},
                    {"MASTER_PORT", std::to_string(util::pick_free_port("127.0.0.1"))},
                    {"LC_ALL", "C"}});
}

struct Result {
  int code;
  std::string output;
};

Result check(const std::vector<std::string>& args) {
  ::testing::internal::CaptureStdout();
  int code = -1;
  try {
    code = run_check(args);
  } catch (...) {
    ::testing::internal::GetCapturedStdout();
    throw;
  }
  return {code, ::testing::internal::GetCapturedStdout()};
}

TEST(RunCheck, AGroupOfOnePassesTheCorrectnessCheck) {
  Variables variables = group_of_one();
  Result result = check({"--timeout", "30"});
  EXPECT_EQ(result.code, 0);
  EXPECT_TRUE(contains(result.output, "rank   0 local  0 on " + util::local_host_name() +
                                          ": OK all-reduce sum 0 == 0, broadcast ok, barrier ok\n"));
  EXPECT_TRUE(contains(result.output, "# dlaunch check: PASSED\n"));
  EXPECT_TRUE(contains(result.output, "#   world size 1, 1 node(s), ranks per node: "));
}

TEST(RunCheck, AWrongContributionFailsTheCheckWithOne) {
  Variables variables = group_of_one();
  Result result = check({"--timeout", "30", "--inject-wrong-rank", "0"});
  EXPECT_EQ(result.code, 1);
  EXPECT_TRUE(contains(result.output, ": FAIL all-reduce sum 1000 (expected 0)"));
  EXPECT_TRUE(contains(result.output, "# dlaunch check: FAILED\n"));
  EXPECT_TRUE(contains(result.output, "passed 0/1, failed 1"));
}

// --bench runs the sweep instead: one row per size, doubling.
TEST(RunCheck, BenchRunsTheBandwidthSweepOverTheSizesAsked) {
  Variables variables = group_of_one();
  Result result = check({"--timeout", "30", "--bench", "--json", "--min-bytes", "8", "--max-bytes", "32",
                         "--iters", "1", "--warmup", "0"});
  EXPECT_EQ(result.code, 0);
  EXPECT_TRUE(contains(result.output, "\"ranks\":1"));
  for (const char* size : {"\"size\":8,", "\"size\":16,", "\"size\":32,"})
    EXPECT_TRUE(contains(result.output, size));
  EXPECT_FALSE(contains(result.output, "\"size\":64,"));
  EXPECT_FALSE(contains(result.output, "dlaunch check: PASSED"));
}

// Started by hand, outside a launcher: the missing variable is named, with
// how to start the check.
TEST(RunCheck, WithoutALaunchersVariablesItSaysHowToStartIt) {
  Variables variables({{"RANK", std::nullopt},
                       {"WORLD_SIZE", std::nullopt},
                       {"SLURM_PROCID", std::nullopt}});
  try {
    run_check({});
    ADD_FAILURE() << "no InputError";
  } catch (const util::InputError& error) {
    EXPECT_TRUE(contains(error.what(), "WORLD_SIZE is not set"));
    EXPECT_TRUE(contains(error.what(), "dlaunch run --nproc-per-node"));
  }
}

// Options are read before anything else: a bad one is refused, --help
// returns 0 without forming a group (no variables set here).
TEST(RunCheck, OptionsAreCheckedBeforeTheGroupIsFormed) {
  Variables variables({{"RANK", std::nullopt}, {"WORLD_SIZE", std::nullopt}, {"SLURM_PROCID", std::nullopt}});
  EXPECT_THROW(run_check({"--no-such-option"}), util::UsageError);
  EXPECT_THROW(run_check({"--min-bytes", "64", "--max-bytes", "8"}), util::UsageError);
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  int code = run_check({"--help"});
  std::string help = ::testing::internal::GetCapturedStdout() + ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(code, 0);
  EXPECT_TRUE(contains(help, "--bench"));
}

}  // namespace
}  // namespace dlaunch::check
