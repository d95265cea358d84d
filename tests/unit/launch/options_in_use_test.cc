// Options dlaunch run refuses because they would change nothing: each one
// beside its accepted neighbour.
#include <gtest/gtest.h>

#include "../test_support/input_error.h"
#include "launch/launch_config.h"
#include "util/error.h"

namespace dlaunch::launch {
namespace {

using test_support::input_error_of;

// What dlaunch run says of ARGS (then train.py) outside Slurm; "no error"
// when it takes them.
std::string run_says(std::vector<std::string> args, std::map<std::string, std::string> variables = {}) {
  util::Environment environment(std::move(variables));
  args.push_back("train.py");
  return input_error_of([&] {
    auto options = parse_run_options(args, environment);
    (void)resolve_launch_config(*options, environment);
  });
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(OptionsInUse, HealthCheckNeedsRestarts) {
  std::string message = run_says({"--health-check", "true"});
  EXPECT_TRUE(contains(message, "--health-check runs before each restart, but --max-restarts is 0 (its default)"))
      << message;
  EXPECT_TRUE(contains(run_says({"--health-check", "true", "--max-restarts", "0"}), "--max-restarts is 0:"));
  EXPECT_EQ(run_says({"--health-check", "true", "--max-restarts", "1"}), "no error");
}

TEST(OptionsInUse, HealthCheckTimeoutNeedsAHealthCheck) {
  EXPECT_TRUE(contains(run_says({"--health-check-timeout", "30", "--max-restarts", "1"}),
                       "--health-check-timeout needs --health-check"));
  EXPECT_EQ(run_says({"--health-check", "true", "--health-check-timeout", "30", "--max-restarts", "1"}), "no error");
}

TEST(OptionsInUse, RetryRepeatedFailuresNeedsRestarts) {
  EXPECT_TRUE(contains(run_says({"--retry-repeated-failures"}), "there are none to spend"));
  EXPECT_EQ(run_says({"--retry-repeated-failures", "--max-restarts", "2"}), "no error");
  // From PET_, as torchrun's variables are read: the same rule, naming the variable.
  EXPECT_TRUE(contains(run_says({}, {{"PET_RETRY_REPEATED_FAILURES", "1"}}), "PET_RETRY_REPEATED_FAILURES spends"));
}

TEST(OptionsInUse, SparesWithoutRestartsAreKept) {
  // A spare takes the place of a launcher that has not joined at round 0,
  // or of one the gate benches, without a restart (docs/RELIABILITY.md).
  EXPECT_EQ(run_says({"--nnodes", "2", "--spare-nodes", "1", "--node-rank", "0", "--master-addr", "h0"}), "no error");
}

TEST(OptionsInUse, StandaloneTakesNoNodeRankOrMasterAddress) {
  EXPECT_TRUE(contains(run_says({"--standalone", "--node-rank", "0"}), "--node-rank '0' would be ignored"));
  EXPECT_TRUE(contains(run_says({"--standalone", "--master-addr", "h0"}), "--master-addr 'h0' would be ignored"));
  EXPECT_EQ(run_says({"--standalone"}), "no error");
  // A site's PET_ variable is not the user's mistake.
  EXPECT_EQ(run_says({"--standalone"}, {{"PET_MASTER_ADDR", "h0"}}), "no error");
}

TEST(OptionsInUse, APrefixTemplateIsReadBeforeAnyRound) {
  EXPECT_TRUE(contains(run_says({"--prefix", "{bogus"}), "--prefix '{bogus' is not a valid template"));
  EXPECT_TRUE(contains(run_says({"--prefix", "{nosuchfield}"}), "is not a valid template"));
  EXPECT_EQ(run_says({"--prefix", "[{node_rank}/{rank}@{host}]"}), "no error");
}

}  // namespace
}  // namespace dlaunch::launch
