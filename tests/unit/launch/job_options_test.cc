// Each job option (launch/job_options.h) reaches the settings node 0's
// service holds, from either spelling and from its PET_* variable, and the
// checks that need more than one option still hold.
#include "launch/job_options.h"

#include <gtest/gtest.h>

#include "launch/launch_config.h"
#include "launch/run_options.h"
#include "util/error.h"

namespace dlaunch::launch {
namespace {

LaunchConfig resolve(std::vector<std::string> args, std::map<std::string, std::string> variables = {}) {
  args.push_back("/bin/true");
  util::Environment environment(std::move(variables));
  return resolve_launch_config(*parse_run_options(args, environment), environment);
}

// A value for OPTION other than its default.
std::vector<std::string> non_default(const JobOption& option) {
  std::string flag = std::string("--") + option.name;
  if (option.is_flag()) return {flag};
  const std::string_view placeholder = option.placeholder;
  if (placeholder == "SECONDS") return {flag, "7"};
  if (placeholder == "STEPS") return {flag, "3"};
  return {flag, "1"};  // N: every count's default is 0 or the training size (2 here)
}

// What some options need beside them (--gate-timeout needs --gate,
// --startup-timeout a shorter --hang-timeout, --health-check-timeout a
// --health-check, which like --retry-repeated-failures needs restarts),
// for any option but itself.
std::vector<std::string> companions_of(std::string_view name) {
  std::vector<std::string> args{"--nnodes", "2"};
  if (name != "gate") args.push_back("--gate");
  if (name != "hang-timeout") args.insert(args.end(), {"--hang-timeout", "1"});
  if (name == "max-restarts") return args;
  args.insert(args.end(), {"--max-restarts", "2"});
  if (name != "health-check") args.insert(args.end(), {"--health-check", "true"});
  return args;
}

TEST(JobOptions, EveryOptionReachesTheJobSettings) {
  for (const auto& option : job_options()) {
    std::vector<std::string> args = companions_of(option.name);
    const LaunchConfig base = resolve(args);
    for (auto& word : non_default(option)) args.push_back(word);
    const LaunchConfig given = resolve(args);
    EXPECT_NE(option.show(given.job), option.show(base.job)) << option.name << " did not reach JobSettings";
  }
}

TEST(JobOptions, TorchrunsUnderscoreSpellingAndThePetVariableWork) {
  EXPECT_EQ(resolve({"--hang_timeout", "9"}).job.forensics.hang.hang_timeout, std::chrono::seconds(9));
  EXPECT_EQ(resolve({}, {{"PET_HANG_TIMEOUT", "11"}}).job.forensics.hang.hang_timeout, std::chrono::seconds(11));
  EXPECT_EQ(resolve({"--max-restarts", "4"}, {{"PET_MAX_RESTARTS", "2"}}).job.max_restarts, 4)
      << "the command line wins over PET_*";
  EXPECT_TRUE(resolve({}, {{"PET_GATE", "1"}}).job.gate.enabled);
  EXPECT_FALSE(resolve({}, {{"PET_GATE", "0"}}).job.gate.enabled);
  EXPECT_THROW(resolve({}, {{"PET_GATE", "maybe"}}), util::InputError);
}

TEST(JobOptions, BadValuesNameTheirSource) {
  try {
    resolve({}, {{"PET_HEARTBEAT_TIMEOUT", "0"}});
    FAIL() << "a zero heartbeat timeout was taken";
  } catch (const util::InputError& error) {
    EXPECT_NE(std::string(error.what()).find("PET_HEARTBEAT_TIMEOUT must be at least 1 second"), std::string::npos)
        << error.what();
  }
  EXPECT_THROW(resolve({"--stack-timeout", "0"}), util::InputError);
  EXPECT_THROW(resolve({"--straggler-lag", "-1"}), util::InputError);
  EXPECT_THROW(resolve({"--hang-timeout", "soon"}), util::InputError);
}

TEST(JobOptions, ChecksThatNeedTheTopologyOrAnotherOption) {
  try {
    resolve({"--nnodes", "2", "--min-nodes", "3"});
    FAIL() << "--min-nodes above --nnodes was taken";
  } catch (const util::InputError& error) {
    EXPECT_NE(std::string(error.what()).find("--min-nodes must be from 1 to --nnodes (2), got 3"), std::string::npos)
        << error.what();
  }
  EXPECT_THROW(resolve({"--gate-timeout", "5"}), util::UsageError);
  EXPECT_EQ(resolve({"--gate", "--gate-timeout", "5"}).job.gate.timeout, std::chrono::seconds(5));
  EXPECT_THROW(resolve({"--startup-timeout", "600"}), util::UsageError) << "nothing to lengthen";
  EXPECT_THROW(resolve({"--hang-timeout", "60", "--startup-timeout", "30"}), util::UsageError) << "shorter";
  EXPECT_EQ(resolve({"--hang-timeout", "60", "--startup-timeout", "600"}).job.forensics.hang.startup_timeout,
            std::chrono::seconds(600));
}

TEST(JobOptions, TheTopologyAndTokenReachTheJobSettingsToo) {
  auto config = resolve({"--nnodes", "3", "--spare-nodes", "1", "--rdzv-id", "abc", "--node-rank", "1"},
                        {{"DLAUNCH_RDZV_TOKEN", "0123456789abcdef0123456789abcdef"}});
  EXPECT_EQ(config.job.nnodes, 3);
  EXPECT_EQ(config.job.spare_nodes, 1);
  EXPECT_EQ(config.job.min_nodes, 3) << "the default is the training size";
  EXPECT_EQ(config.job.run_id, "abc");
  EXPECT_EQ(config.job.token, std::optional<std::string>("0123456789abcdef0123456789abcdef"));
}

TEST(JobOptions, AreRunOptionsForHelpCompletionAndValueLookup) {
  const std::string help = run_options_help();
  for (const auto& option : job_options()) {
    EXPECT_NE(help.find(std::string("--") + option.name), std::string::npos) << option.name;
    EXPECT_EQ(run_option_kind(std::string("--") + option.name),
              option.is_flag() ? RunOptionKind::kFlag : RunOptionKind::kValued)
        << option.name;
  }
  EXPECT_EQ(run_option_value({"--hang_timeout", "60", "--gate", "w.sh"}, "--hang-timeout"), "60");
}

}  // namespace
}  // namespace dlaunch::launch
