// Option parsing: both spellings, PET_ fallbacks, PROGRAM and its arguments untouched.
#include "launch/run_options.h"

#include <gtest/gtest.h>

#include "util/error.h"

namespace dlaunch::launch {
namespace {

RunOptions parse(std::vector<std::string> args, std::map<std::string, std::string> variables = {}) {
  auto options = parse_run_options(args, util::Environment(std::move(variables)));
  EXPECT_TRUE(options.has_value());
  return *options;
}

TEST(RunOptions, AcceptsDashAndUnderscoreSpellings) {
  auto dashed = parse({"--nproc-per-node", "4", "--node-rank", "1", "--nnodes", "2", "x"});
  auto underscored = parse({"--nproc_per_node", "4", "--node_rank", "1", "--nnodes=2", "x"});
  EXPECT_EQ(dashed.nproc_per_node->value, "4");
  EXPECT_EQ(underscored.nproc_per_node->value, "4");
  EXPECT_EQ(underscored.node_rank->value, "1");
  EXPECT_EQ(underscored.nnodes->value, "2");
  EXPECT_EQ(underscored.nproc_per_node->source, "--nproc-per-node");
}

TEST(RunOptions, ProgramArgumentsAreNotParsed) {
  auto options = parse({"--standalone", "train.py", "--nproc-per-node", "9", "--lr", "0.1"});
  EXPECT_TRUE(options.standalone);
  EXPECT_FALSE(options.nproc_per_node);
  EXPECT_EQ(options.command,
            (std::vector<std::string>{"train.py", "--nproc-per-node", "9", "--lr", "0.1"}));
}

TEST(RunOptions, DoubleDashEndsTheOptions) {
  auto options = parse({"--no-python", "--", "--weird-program-name", "-x"});
  EXPECT_TRUE(options.no_python);
  EXPECT_EQ(options.command, (std::vector<std::string>{"--weird-program-name", "-x"}));
}

TEST(RunOptions, ShortFlags) {
  auto options = parse({"-r", "3", "-t", "0:1", "-m", "pkg.train"});
  EXPECT_EQ(options.redirects->value, "3");
  EXPECT_EQ(options.tee->value, "0:1");
  EXPECT_TRUE(options.module);
}

TEST(RunOptions, PetVariablesFillWhatTheCommandLineLeftOut) {
  auto options = parse({"--nnodes", "2", "x"}, {{"PET_NNODES", "9"},
                                                {"PET_NPROC_PER_NODE", "3"},
                                                {"PET_STANDALONE", "1"},
                                                {"PET_MAX_RESTARTS", "4"}});
  EXPECT_EQ(options.nnodes->value, "2");
  EXPECT_EQ(options.nnodes->source, "--nnodes");
  EXPECT_EQ(options.nproc_per_node->value, "3");
  EXPECT_EQ(options.nproc_per_node->source, "PET_NPROC_PER_NODE");
  EXPECT_EQ(options.job.at("max-restarts").value, "4");
  EXPECT_TRUE(options.standalone);
}

TEST(RunOptions, OutputAndOrphanOptionsHaveTheirPetFallbacks) {
  auto given = parse({"--kill-escaped", "cgroup", "--log-dir-required", "x"});
  EXPECT_EQ(given.kill_escaped->value, "cgroup");
  EXPECT_TRUE(given.log_dir_required);
  auto from_environment =
      parse({"x"}, {{"PET_KILL_ESCAPED", "off"}, {"PET_LOG_DIR_REQUIRED", "true"}});
  EXPECT_EQ(from_environment.kill_escaped->source, "PET_KILL_ESCAPED");
  EXPECT_TRUE(from_environment.log_dir_required);
  EXPECT_EQ(run_option_kind("--kill_escaped=off"), RunOptionKind::kValued);
  EXPECT_EQ(run_option_kind("--log-dir-required"), RunOptionKind::kFlag);
}

TEST(RunOptions, SpareNodesTakesBothSpellingsAndItsPetVariable) {
  auto dashed = parse({"--spare-nodes", "2", "x"});
  EXPECT_EQ(dashed.spare_nodes->value, "2");
  EXPECT_EQ(dashed.spare_nodes->source, "--spare-nodes");
  auto underscored = parse({"--spare_nodes=3", "x"});
  EXPECT_EQ(underscored.spare_nodes->value, "3");
  EXPECT_EQ(underscored.spare_nodes->source, "--spare-nodes");
  auto from_environment = parse({"x"}, {{"PET_SPARE_NODES", "1"}});
  EXPECT_EQ(from_environment.spare_nodes->value, "1");
  EXPECT_EQ(from_environment.spare_nodes->source, "PET_SPARE_NODES");
  EXPECT_EQ(parse({"--spare-nodes", "4", "x"}, {{"PET_SPARE_NODES", "1"}}).spare_nodes->value, "4");
  EXPECT_FALSE(parse({"x"}).spare_nodes);
  EXPECT_EQ(run_option_kind("--spare_nodes"), RunOptionKind::kValued);
}

TEST(RunOptions, BadPetFlagValueIsAnError) {
  EXPECT_THROW(parse({"x"}, {{"PET_STANDALONE", "maybe"}}), util::InputError);
}

TEST(RunOptions, MissingProgramIsAUsageError) {
  util::Environment environment;
  EXPECT_THROW(parse_run_options({"--nnodes", "2"}, environment), util::UsageError);
  EXPECT_NO_THROW(parse_run_options({"--nnodes", "2"}, environment, /*require_program=*/false));
}

TEST(RunOptions, UnknownOptionIsAUsageErrorNamingIt) {
  util::Environment environment;
  try {
    parse_run_options({"--nprocs-per-node", "2", "x"}, environment);
    FAIL() << "expected UsageError";
  } catch (const util::UsageError& error) {
    EXPECT_NE(std::string(error.what()).find("--nprocs-per-node"), std::string::npos);
  }
}

TEST(RunOptions, MissingValueIsAUsageError) {
  util::Environment environment;
  EXPECT_THROW(parse_run_options({"--nnodes"}, environment), util::UsageError);
}

TEST(RunOptions, HelpListsTorchrunOptions) {
  std::string help = run_options_help();
  for (const char* option : {"--nproc-per-node", "--nnodes", "--node-rank", "--master-addr",
                             "--master-port", "--standalone", "--max-restarts", "--log-dir",
                             "--redirects", "--tee", "--local-ranks-filter", "--no-python",
                             "--module", "--rdzv-id", "--shutdown-timeout", "--rdzv-timeout"})
    EXPECT_NE(help.find(option), std::string::npos) << option;
}

}  // namespace
}  // namespace dlaunch::launch

namespace dlaunch::launch {
namespace {

TEST(RunOptionValue, FindsEitherSpellingAndSkipsOtherOptionsValues) {
  std::vector<std::string> args{"--prefix", "--shutdown-timeout", "--nproc_per_node=2",
                                "--shutdown_timeout=7", "-r", "3", "--standalone"};
  // "--shutdown-timeout" after --prefix is --prefix's value, not the option.
  EXPECT_EQ(run_option_value(args, "--shutdown-timeout"), "7");
  EXPECT_EQ(run_option_value(args, "--nproc-per-node"), "2");
  EXPECT_EQ(run_option_value(args, "--redirects"), "3");
  EXPECT_EQ(run_option_value(args, "--max-restarts"), std::nullopt);
  EXPECT_EQ(run_option_value({"--", "--max-restarts", "1"}, "--max-restarts"), std::nullopt);
}

}  // namespace
}  // namespace dlaunch::launch
