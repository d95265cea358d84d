// torchrun's options dlaunch refuses, translates or says it ignores.
#include "launch/torchrun_compat.h"

#include <gtest/gtest.h>

#include "../test_support/input_error.h"
#include "../test_support/text.h"
#include "launch/launch_config.h"
#include "util/error.h"

namespace dlaunch::launch {
namespace {

RunOptions parse(std::vector<std::string> args) {
  args.push_back("/bin/true");
  return *parse_run_options(args, util::Environment());
}

std::string joined(const std::vector<std::string>& lines) {
  std::string text;
  for (const auto& line : lines) text += line + "\n";
  return text;
}

using test_support::contains;
using test_support::input_error_of;

TEST(TorchrunCompat, TheLinePrefixTemplateBecomesAPrefix) {
  auto prefix = [](const std::string& text) {
    return prefix_from_torchrun_template(Setting{text, "--log-line-prefix-template"});
  };
  EXPECT_EQ(prefix("${role_name}-${local_rank}:"), "{role}-{local_rank}:");
  EXPECT_EQ(prefix("[${rank}@${hostname}] "), "[{rank}@{host}] ");
  EXPECT_EQ(prefix("$rank|$$|{x}"), "{rank}|$|{{x}}") << "string.Template's $name and $$, literal braces";
  EXPECT_TRUE(contains(input_error_of([&] { prefix("${node}"); }), "names the field 'node'"));
  EXPECT_TRUE(contains(input_error_of([&] { prefix("${rank"); }), "without its '}'"));
  EXPECT_TRUE(contains(input_error_of([&] { prefix("cost $"); }), "write $$ for a dollar sign"));
}

TEST(TorchrunCompat, TheTemplateReachesTheWorkersPrefix) {
  util::Environment environment;
  auto config = resolve_launch_config(parse({"--log-line-prefix-template", "${rank}>"}), environment);
  EXPECT_EQ(config.prefix_template, "{rank}>");
  EXPECT_THROW(check_torchrun_options(parse({"--prefix", "x", "--log-line-prefix-template", "y"})), util::UsageError);
}

TEST(TorchrunCompat, WhatTorchrunRefusesOrCannotWorkIsRefused) {
  EXPECT_TRUE(contains(input_error_of([] { check_torchrun_options(parse({"--start-method", "thread"})); }),
                       "--start-method must be spawn, fork or forkserver"));
  EXPECT_NO_THROW(check_torchrun_options(parse({"--start-method", "fork"})));
  EXPECT_TRUE(contains(input_error_of([] { check_torchrun_options(parse({"--standalone", "--nnodes", "2"})); }),
                       "--standalone runs one node alone"));
  EXPECT_NO_THROW(check_torchrun_options(parse({"--standalone", "--nnodes", "1:1"})));
}

// Ignored, but a number of seconds as torchrun takes it.
TEST(TorchrunCompat, TheMonitorIntervalIsANumber) {
  EXPECT_TRUE(contains(input_error_of([] { check_torchrun_options(parse({"--monitor-interval", "abc"})); }),
                       "--monitor-interval must be a number of seconds such as 0.1 (as torchrun takes it), got 'abc'"));
  EXPECT_THROW(check_torchrun_options(parse({"--monitor_interval=-1"})), util::UsageError);
  EXPECT_NO_THROW(check_torchrun_options(parse({"--monitor-interval", "0.1"})));
  EXPECT_NO_THROW(check_torchrun_options(parse({"--monitor-interval", "5"})));
}

TEST(TorchrunCompat, WhatIsIgnoredIsSaidOnce) {
  auto notices = joined(torchrun_ignored_notices(parse({"--rdzv-backend", "etcd", "--rdzv-conf",
                                                        "join_timeout=5,read_timeout=60, is_host=1",
                                                        "--logs-specs", "mine", "--start-method", "fork"})));
  EXPECT_TRUE(contains(notices, "--rdzv-backend etcd is ignored")) << notices;
  EXPECT_TRUE(contains(notices, "read_timeout, is_host ignored")) << notices;
  EXPECT_FALSE(contains(notices, "join_timeout ignored")) << notices;
  EXPECT_TRUE(contains(notices, "--logs-specs mine is ignored")) << notices;
  EXPECT_TRUE(contains(notices, "--start-method fork is ignored")) << notices;
  EXPECT_TRUE(torchrun_ignored_notices(parse({"--rdzv-backend", "c10d", "--rdzv-conf", "join_timeout=5"})).empty());
  auto config = resolve_launch_config(parse({"--rdzv-backend", "etcd-v2"}), util::Environment());
  EXPECT_TRUE(contains(joined(config.topology.notices), "--rdzv-backend etcd-v2 is ignored"));
}

// torchrun (argparse) silently takes the last of two values; dlaunch
// refuses to guess which one was meant (util/option_rules.h), and takes the
// same value given twice once.
TEST(TorchrunCompat, AnOptionGivenTwiceWithDifferentValuesIsRefusedUnlikeTorchrun) {
  auto message = input_error_of([] { parse({"--nproc-per-node", "2", "--nproc_per_node", "3"}); });
  EXPECT_TRUE(contains(message, "is given twice with different values, '--nproc-per-node 2' and '--nproc_per_node 3'"))
      << message;
  message = input_error_of([] { parse({"--hang-timeout", "5", "--hang-timeout=9"}); });
  EXPECT_TRUE(contains(message, "'--hang-timeout 5' and '--hang-timeout=9'")) << message;
  auto options = parse({"--nproc-per-node", "2", "--nproc_per_node", "2", "--hang-timeout", "9", "--hang-timeout", "9"});
  EXPECT_EQ(options.nproc_per_node->value, "2");
  EXPECT_EQ(options.job.at("hang-timeout").value, "9");
}

TEST(TorchrunCompat, ALocalRanksFilterNamingNoWorkerOfThisNodeIsRefused) {
  auto message = input_error_of([] { resolve_launch_config(parse({"--nproc-per-node", "2", "--local-ranks-filter", "7"}), util::Environment()); });
  EXPECT_TRUE(contains(message, "names local rank 7, but this node runs 2 workers (local ranks 0-1, from --nproc-per-node)"))
      << message;
  EXPECT_NO_THROW(resolve_launch_config(parse({"--nproc-per-node", "2", "--local-ranks-filter", "1"}), util::Environment()));
}

}  // namespace
}  // namespace dlaunch::launch
