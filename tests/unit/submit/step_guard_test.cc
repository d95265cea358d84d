// The job's step (srun) under the step guard: it ends when srun does, or a
// grace after the verdict file holds an exit code, and the verdict decides.
// The steps here are real children (bash scripts standing in for srun).
#include "submit/step_guard.h"

#include <gtest/gtest.h>
#include <csignal>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "../test_support/temp_dir.h"
#include "../test_support/text.h"
#include "util/error.h"

namespace dlaunch::submit {
namespace {

using namespace std::chrono_literals;
using test_support::contains;

TEST(ParseVerdictCode, AWholeNumberFrom0To255AroundWhiteSpace) {
  EXPECT_EQ(parse_verdict_code("0\n"), 0);
  EXPECT_EQ(parse_verdict_code("3"), 3);
  EXPECT_EQ(parse_verdict_code("  137 \n"), 137);
  EXPECT_EQ(parse_verdict_code("\t255\r\n"), 255);
}

// Anything else is a file still being written or not a verdict at all: the
// guard keeps waiting past it rather than ending the step on a wrong code.
TEST(ParseVerdictCode, NothingForOutOfRangeNegativeGarbageOrEmpty) {
  for (const char* text : {"256", "1000", "-1", "-255", "abc", "3x", "1 2", "0x1", "3.0", "", " \n", "\n\n"})
    EXPECT_EQ(parse_verdict_code(text), std::nullopt) << "'" << text << "'";
}

// Each test gets its own folder, a verdict file path in it (not written
// yet), and settings that look often so that the tests run quickly.
class StepGuard : public ::testing::Test {
 protected:
  StepGuard() {
    settings_.verdict_file = folder() + "/exit_code";
    settings_.poll_interval = 20ms;
    settings_.say = [this](const std::string& line) { said_.push_back(line); };
  }

  const std::string& folder() const { return dir_.path(); }
  std::string file(const std::string& name) const { return folder() + "/" + name; }

  // SCRIPT runs in bash with the test's folder as $1 and the verdict file
  // as $2.
  std::vector<std::string> step(const std::string& script) const {
    return {"/bin/bash", "-c", script, "step", folder(), settings_.verdict_file};
  }

  int run(const std::string& script) { return run_step_until_verdict(step(script), settings_, signals_); }

  test_support::TempDir dir_;
  process::SignalChannel signals_;  // the guard reads SIGCHLD and the forwarded signals from it
  StepGuardSettings settings_;
  std::vector<std::string> said_;
};

// Keeps a step alive that waits for a signal without leaving a child
// behind: bash runs a trap between two short sleeps. The bound only ends a
// step whose signal never came (the test then fails on its exit code).
constexpr const char* kWaitForASignal = "for i in $(seq 600); do sleep 0.1; done; exit 99";

TEST_F(StepGuard, WithoutAVerdictTheStepsOwnExitCodeIsReturned) {
  EXPECT_EQ(run("exit 5"), 5);
  EXPECT_TRUE(said_.empty()) << said_.front();
}

// srun failed with the lost node's task's code, but the launcher that
// speaks for the job decided the job's end.
TEST_F(StepGuard, TheVerdictDecidesOverTheStepsOwnExitCode) {
  EXPECT_EQ(run("echo 3 > \"$2\"; exit 9"), 3);
  EXPECT_TRUE(said_.empty()) << "the step ended by itself: " << said_.front();
}

// srun waits for a task whose node froze: it would never return. The guard
// returns at all only because it ended the step after the grace.
TEST_F(StepGuard, AStepThatNeverEndsIsEndedAfterTheGraceAndTheVerdictReturned) {
  settings_.grace = 0ms;
  EXPECT_EQ(run("echo 3 > \"$2\"; trap '' TERM INT; exec sleep 600"), 3);
  ASSERT_EQ(said_.size(), 1u);
  EXPECT_TRUE(contains(said_[0], "exit code 3"));
  EXPECT_TRUE(contains(said_[0], settings_.verdict_file));
  EXPECT_TRUE(contains(said_[0], "ending the step"));
}

// --srun mode: srun owns the allocation, so it is asked to quit (SIGINT)
// and releases it. The quit grace is far longer than the test: the step
// ends in time only by its SIGINT trap, which leaves the marker.
TEST_F(StepGuard, InTheForegroundTheStepIsAskedToQuitWithSigint) {
  settings_.grace = 0ms;
  settings_.foreground = true;
  settings_.quit_grace = 10min;
  EXPECT_EQ(run(std::string("trap ': > \"$1/interrupted\"; exit 130' INT; echo 2 > \"$2\"; ") + kWaitForASignal), 2);
  EXPECT_TRUE(std::filesystem::exists(file("interrupted")));
  EXPECT_EQ(said_.size(), 1u);
}

// An srun that does not quit on SIGINT is killed once the quit grace is
// over: it ignores SIGINT and SIGTERM, so only SIGKILL ends it, and the
// guard returns at all only because it sent that.
TEST_F(StepGuard, InTheForegroundAStepThatIgnoresSigintIsKilledAfterTheQuitGrace) {
  settings_.grace = 0ms;
  settings_.foreground = true;
  settings_.quit_grace = 200ms;
  EXPECT_EQ(run("trap '' INT TERM; echo 2 > \"$2\"; exec sleep 600"), 2);
  EXPECT_EQ(said_.size(), 1u);
}

// After a requeue the job script runs again in the same folder: the
// earlier run's verdict is not this run's, and must neither decide the
// exit code nor end this run's step. The step itself checks that the file
// is gone when it starts.
TEST_F(StepGuard, AVerdictLeftByAnEarlierRunIsRemovedBeforeTheStepStarts) {
  std::ofstream(settings_.verdict_file) << "7\n";
  ASSERT_TRUE(std::filesystem::exists(settings_.verdict_file));
  EXPECT_EQ(run("if [ -e \"$2\" ]; then exit 98; fi; exit 4"), 4);
  EXPECT_FALSE(std::filesystem::exists(settings_.verdict_file));
}

// A scancel --signal=USR1 reaches the batch script (the guard), not srun:
// the guard passes it on. run_step_until_verdict blocks, so the signal is
// raised from a thread once the step has set its trap and said so. The
// thread starts after the SignalChannel, so it blocks the channel's
// signals too and the guard's channel reads the signal.
TEST_F(StepGuard, ASignalTheGuardReceivesIsForwardedToTheStep) {
  const std::string ready = file("ready");
  std::thread raiser([&ready] {
    // A bound that only catches a step that never got ready; the step's
    // own bound then ends it.
    auto give_up = std::chrono::steady_clock::now() + 60s;
    while (!std::filesystem::exists(ready) && std::chrono::steady_clock::now() < give_up)
      std::this_thread::sleep_for(10ms);
    if (std::filesystem::exists(ready)) ::kill(::getpid(), SIGUSR1);
  });
  int code = run(std::string("trap ': > \"$1/usr1\"; exit 0' USR1; : > \"$1/ready\"; ") + kWaitForASignal);
  raiser.join();
  EXPECT_EQ(code, 0);
  EXPECT_TRUE(std::filesystem::exists(file("usr1")));
  EXPECT_TRUE(said_.empty()) << said_.front();
}

// A launcher on another host that wrote the verdict waits to know that the
// batch script lives: the guard says it read the verdict beside the file
// (launch/run_record.h), and removes such a word an earlier run left.
TEST_F(StepGuard, ItSaysItReadTheVerdictBesideTheFile) {
  const std::string seen = settings_.verdict_file + ".seen";
  std::ofstream(seen) << "an earlier run's\n";
  // The step checks the word is gone when it starts, writes the verdict,
  // then waits (bounded) for the guard's word before it ends.
  EXPECT_EQ(run("[ -e \"$2.seen\" ] && exit 97; echo 0 >\"$2\"; "
                "for i in $(seq 300); do [ -s \"$2.seen\" ] && exit 9; sleep 0.02; done; exit 98"),
            0);
  std::ifstream word(seen);
  std::string host;
  std::getline(word, host);
  EXPECT_FALSE(host.empty()) << "it names the host of the batch script";
}

TEST_F(StepGuard, AStepThatCannotBeStartedThrows) {
  EXPECT_THROW(run_step_until_verdict({"/nonexistent/dlaunch-no-such-srun", "--wait=60"}, settings_, signals_),
               util::SystemError);
}

}  // namespace
}  // namespace dlaunch::submit
