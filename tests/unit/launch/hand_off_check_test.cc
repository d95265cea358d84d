// A dlaunch run command line checked before it leaves for the nodes, each
// refusal beside the accepted neighbour that shows what the rule allows.
#include "launch/hand_off_check.h"

#include <gtest/gtest.h>

#include "../test_support/input_error.h"
#include "util/error.h"

namespace dlaunch::launch {
namespace {

using test_support::input_error_of;

// A hand-off of ARGS (then "--" and train.py) from submit, in node 0 of a
// batch step of NODES nodes with GPUS each; every option "came from" the
// setting named after it.
HandOff submit_hand_off(std::vector<std::string> args, int nodes = 2, int gpus = 4) {
  HandOff hand_off;
  hand_off.run_args = std::move(args);
  hand_off.run_args.insert(hand_off.run_args.end(), {"--", "train.py"});
  hand_off.node_environment = slurm_step_stand_in(nodes, gpus);
  hand_off.origin_of = [](std::string_view name) { return "the setting of " + std::string(name); };
  return hand_off;
}

std::string refusal_of(const HandOff& hand_off) {
  return input_error_of([&] { (void)check_hand_off(hand_off); });
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(HandOffCheck, AnUnknownOptionIsRefusedAsRunRefusesItNamingWhereItCameFrom) {
  HandOff bogus = submit_hand_off({"--bogus-option"});
  std::string message = refusal_of(bogus);
  EXPECT_TRUE(contains(message, "unknown option '--bogus-option' for dlaunch run")) << message;
  EXPECT_TRUE(contains(message, "(given as the setting of --bogus-option)")) << message;
  EXPECT_TRUE(contains(message, "Checked as every node's dlaunch run will read it, before sbatch: nothing was "
                                "submitted"))
      << message;
  // A usage mistake keeps its kind: the same exit code as dlaunch run's.
  EXPECT_THROW((void)check_hand_off(bogus), util::UsageError);
  EXPECT_EQ(refusal_of(submit_hand_off({"--max-restarts", "2"})), "no error");
}

TEST(HandOffCheck, ValuesTheNodesWouldRefuseAreRefusedHere) {
  EXPECT_TRUE(contains(refusal_of(submit_hand_off({"--prefix={bogus"})), "--prefix '{bogus' is not a valid template"));
  EXPECT_EQ(refusal_of(submit_hand_off({"--prefix=[{host} {rank}]"})), "no error");
  EXPECT_TRUE(contains(refusal_of(submit_hand_off({"--console-overflow", "lossy"})), "--console-overflow must be"));
  EXPECT_EQ(refusal_of(submit_hand_off({"--console-overflow", "drop"})), "no error");
  EXPECT_TRUE(contains(refusal_of(submit_hand_off({"--nproc-per-node", "0"})), "--nproc-per-node must be a number"));
  EXPECT_EQ(refusal_of(submit_hand_off({"--nproc-per-node", "1"})), "no error");
}

// Valid on the nodes, but each node would exit 0 without a worker.
TEST(HandOffCheck, OptionsThatWouldMakeTheNodesDoNothingAreRefused) {
  for (const char* no_op : {"--check-only", "--help", "-h"}) {
    std::string message = refusal_of(submit_hand_off({no_op}));
    EXPECT_TRUE(contains(message, "exit without starting a worker; drop it")) << message;
    EXPECT_TRUE(contains(message, "nothing was submitted")) << message;
  }
  // A program's own --help is the program's.
  HandOff program_help = submit_hand_off({});
  program_help.run_args.push_back("--help");
  EXPECT_EQ(refusal_of(program_help), "no error");
}

TEST(HandOffCheck, TheOriginIsTheOptionTheMessageNamesWhole) {
  // --health-check-timeout's message names it, not --health-check (a prefix of it).
  std::string message = refusal_of(submit_hand_off({"--health-check-timeout", "5"}));
  EXPECT_TRUE(contains(message, "(given as the setting of --health-check-timeout)")) << message;
}

TEST(HandOffCheck, StepDependentChecksSeeTheRequestedStep) {
  // Node 0 of a step of 2 nodes: --min-nodes above --nnodes, and more spares than the step holds.
  EXPECT_TRUE(contains(refusal_of(submit_hand_off({"--min-nodes", "3"})), "--min-nodes must be from 1 to --nnodes (2)"));
  EXPECT_EQ(refusal_of(submit_hand_off({"--min-nodes", "2"})), "no error");
  EXPECT_TRUE(contains(refusal_of(submit_hand_off({"--spare-nodes", "2"})), "leaves no node to train"));
  EXPECT_EQ(refusal_of(submit_hand_off({"--spare-nodes", "1"})), "no error");
  // The step's GPUs are its workers: --local-ranks-filter is judged against them.
  EXPECT_TRUE(contains(refusal_of(submit_hand_off({"--local-ranks-filter", "4"})), "names local rank 4"));
  EXPECT_EQ(refusal_of(submit_hand_off({"--local-ranks-filter", "3"})), "no error");
  // --requeue needs a Slurm job, which the stand-in is.
  EXPECT_EQ(refusal_of(submit_hand_off({"--preempt-signal", "USR1", "--requeue"})), "no error");
}

TEST(HandOffCheck, WhatOnlyTheNodeCanTellIsNotJudgedHere) {
  // The interpreter is named, not looked up in this PATH.
  HandOff python = submit_hand_off({"--python", "/nowhere/python3"});
  python.node_environment.set("PATH", "/usr/bin:/bin");
  LaunchConfig config = check_hand_off(python);
  ASSERT_TRUE(config.python.has_value());
  EXPECT_EQ(config.python->name, "/nowhere/python3");
  EXPECT_FALSE(config.python->path.has_value());
  // A token file on the node's disk is not read here; dlaunch run on this node reads it.
  EXPECT_EQ(refusal_of(submit_hand_off({"--rdzv-token-file", "/nowhere/token"})), "no error");
  util::Environment here = slurm_step_stand_in(2, 4);
  auto options = parse_run_options({"--rdzv-token-file", "/nowhere/token", "train.py"}, here);
  EXPECT_NE(input_error_of([&] { (void)resolve_launch_config(*options, here); }), "no error");
}

TEST(HandOffCheck, SshSaysSshAndStarted) {
  HandOff hand_off = submit_hand_off({"--nproc-per-node", "0"});
  hand_off.command = "dlaunch ssh";
  hand_off.before = "ssh";
  hand_off.origin_of = nullptr;
  std::string message = refusal_of(hand_off);
  EXPECT_TRUE(message.starts_with("dlaunch ssh: ")) << message;
  EXPECT_TRUE(contains(message, "before ssh: nothing was started")) << message;
  EXPECT_FALSE(contains(message, "given as")) << message;
}

TEST(HandOffCheck, TaskLaunchAsksDlaunchExecsParser) {
  HandOff exec = submit_hand_off({"--bogus"});
  exec.exec = true;
  EXPECT_TRUE(contains(refusal_of(exec), "for dlaunch exec")) << refusal_of(exec);
  exec.run_args = {"--no-python", "--", "./a.out"};
  EXPECT_EQ(refusal_of(exec), "no error");
}

TEST(HandOffCheck, TheStandInIsNodeZeroOfTheStep) {
  util::Environment step = slurm_step_stand_in(3, 8);
  EXPECT_EQ(step.get("SLURM_STEP_NUM_NODES"), "3");
  EXPECT_EQ(step.get("SLURM_NODEID"), "0");
  EXPECT_EQ(step.get("SLURM_STEP_NODELIST"), "node[0-2]");
  EXPECT_EQ(step.get("SLURM_GPUS_ON_NODE"), "8");
  EXPECT_EQ(slurm_step_stand_in(1, 0).get("SLURM_STEP_NODELIST"), "node0");
  EXPECT_FALSE(slurm_step_stand_in(1, 0).has("SLURM_GPUS_ON_NODE"));
  auto options = parse_run_options({"train.py"}, step);
  LaunchConfig config = resolve_launch_config(*options, step);
  EXPECT_EQ(config.topology.nnodes.value, 3);
  EXPECT_EQ(config.topology.nproc_per_node.value, 8);
}

TEST(HandOffCheck, CheckOnlyLineSaysNodesWorkersAndProgram) {
  util::Environment here(std::map<std::string, std::string>{{"PATH", "/nowhere"}});
  auto options = parse_run_options({"--nnodes", "2", "--spare-nodes", "1", "--node-rank", "0", "--nproc-per-node",
                                    "3", "--master-addr", "h0", "train.py"},
                                   here);
  std::string line = check_only_line(resolve_launch_config(*options, here));
  EXPECT_TRUE(line.starts_with("dlaunch run: the options are valid: 2 node(s) and 1 spare(s) (--nnodes), 3 "
                               "worker(s) on this node (--nproc-per-node), node rank 0 (--node-rank), program "
                               "train.py under python3"))
      << line;
  options = parse_run_options({"--no-python", "./a.out"}, here);
  line = check_only_line(resolve_launch_config(*options, here));
  EXPECT_TRUE(contains(line, "program ./a.out; nothing was started")) << line;
}

}  // namespace
}  // namespace dlaunch::launch
