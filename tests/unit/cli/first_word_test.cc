// dlaunch's first word: a command is found by its exact name, anything
// else gets the line that was likely meant.
#include "cli/first_word.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../test_support/text.h"
#include "util/error.h"

namespace dlaunch::cli {
namespace {

using test_support::contains;

int no_op(const CommandArgs&) { return 0; }

constexpr Command kTable[] = {
    {"run", "start workers", no_op},
    {"submit", "submit a job", no_op},
    {"__internal", "", no_op},
};

std::string refusal(const std::vector<std::string>& words) {
  try {
    command_named_first(kTable, words);
  } catch (const util::UsageError& error) {
    return error.what();
  }
  return "<found>";
}

TEST(FirstWord, ACommandIsFoundByItsName) {
  EXPECT_STREQ(command_named_first(kTable, {"submit", "x"}).name, "submit");
  EXPECT_STREQ(command_named_first(kTable, {"run"}).name, "run");
}

TEST(FirstWord, AProgramOrARunOptionIsMeantForDlaunchRun) {
  EXPECT_TRUE(contains(refusal({"train.py", "--lr", "0.1"}),
                       "'train.py' is not a command. Did you mean 'dlaunch run train.py --lr 0.1'?"));
  EXPECT_TRUE(contains(refusal({"bin/trainer"}), "Did you mean 'dlaunch run bin/trainer'?"));
  EXPECT_TRUE(contains(refusal({"--nnodes=2", "train.py"}),
                       "'--nnodes=2' is an option of dlaunch run, not a command. Did you mean "
                       "'dlaunch run --nnodes=2 train.py'?"));
}

// A submit option, mpirun's -np and another launcher's name get the line meant.
TEST(FirstWord, OtherHabitsGetTheCommandThatDoesIt) {
  EXPECT_TRUE(contains(refusal({"--nodes", "2", "train.py"}),
                       "'--nodes' is an option of dlaunch submit, not a command. Did you mean "
                       "'dlaunch submit --nodes 2 train.py'?"));
  EXPECT_TRUE(contains(refusal({"-np", "4", "train.py"}), "Did you mean 'dlaunch run --nproc-per-node 4 train.py'?"));
  EXPECT_TRUE(contains(refusal({"torchrun", "--nnodes", "2", "t.py"}),
                       "'torchrun' is not a dlaunch command. Did you mean 'dlaunch run --nnodes 2 t.py'?"));
  EXPECT_TRUE(contains(refusal({"sbatch", "t.py"}), "Did you mean 'dlaunch submit t.py'?"));
}

// A line is suggested only when its command takes it: srun's options stay
// srun's, and words another launcher's parser would refuse are not offered
// as a dlaunch line.
TEST(FirstWord, OnlyALineThatWorksIsSuggested) {
  std::string srun = refusal({"srun", "-N", "2", "train.py", "--lr", "0.1"});
  EXPECT_TRUE(contains(srun, "'srun -N 2 --ntasks-per-node 1 dlaunch run train.py --lr 0.1'")) << srun;
  EXPECT_TRUE(contains(srun, "dlaunch submit --srun --nodes N")) << srun;
  EXPECT_FALSE(contains(srun, "dlaunch run -N")) << srun;
  // mpirun's -np is no option of dlaunch run: no 'Did you mean' line, the reason instead.
  std::string mpirun = refusal({"mpirun", "-np", "4", "train.py"});
  EXPECT_FALSE(contains(mpirun, "Did you mean 'dlaunch run -np")) << mpirun;
  EXPECT_TRUE(contains(mpirun, "'dlaunch run -np 4 train.py' would not do either: unknown option '-np'")) << mpirun;
  // A submit option whose line submit would refuse is not suggested either.
  std::string nodes = refusal({"--nodes", "0", "train.py"});
  EXPECT_FALSE(contains(nodes, "Did you mean 'dlaunch submit --nodes 0")) << nodes;
  EXPECT_TRUE(contains(nodes, "would not do either")) << nodes;
}

TEST(FirstWord, AnotherOptionGetsTheNearestOfHelpAndVersion) {
  EXPECT_TRUE(contains(refusal({"-V"}), "unknown option '-V' for dlaunch. Did you mean '--version'?"));
  EXPECT_TRUE(contains(refusal({"--versoin"}), "Did you mean '--version'?"));
  EXPECT_TRUE(contains(refusal({"--hepl"}), "Did you mean '--help'?"));
  EXPECT_FALSE(contains(refusal({"--frobnicate"}), "Did you mean"));
}

TEST(FirstWord, AnyOtherWordGetsTheNearestCommand) {
  EXPECT_TRUE(contains(refusal({"sumbit"}), "unknown command 'sumbit'. Did you mean 'submit'?"));
  EXPECT_FALSE(contains(refusal({"__internl"}), "__internal"));  // helpers are never suggested
}

TEST(FirstWord, TheShortUsageNamesThePublicCommands) {
  std::string usage = short_usage(kTable);
  EXPECT_TRUE(contains(usage, "Usage: dlaunch COMMAND [options] [ARGS...]\n"));
  EXPECT_TRUE(contains(usage, "Commands: run, submit\n"));
}

}  // namespace
}  // namespace dlaunch::cli
