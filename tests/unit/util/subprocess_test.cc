// Running a helper program and capturing what it says.
#include "util/subprocess.h"

#include <gtest/gtest.h>
#include <csignal>

#include <string>

#include "util/error.h"

namespace dlaunch::util {
namespace {

TEST(Subprocess, CapturesBothStreamsApartAndTheExitCode) {
  CapturedRun run = run_captured({"sh", "-c", "echo out; echo err >&2; printf tail; exit 7"});
  EXPECT_EQ(run.out, "out\ntail");
  EXPECT_EQ(run.err, "err\n");
  EXPECT_EQ(run.exit_code, 7);
}

TEST(Subprocess, ArgumentsArePassedAsTheyAreWithoutAShell) {
  CapturedRun run = run_captured({"printf", "%s|", "a b", "$HOME", "'q'", ""});
  EXPECT_EQ(run.out, "a b|$HOME|'q'||");
  EXPECT_EQ(run.exit_code, 0);
}

TEST(Subprocess, StdinIsEmpty) {
  CapturedRun run = run_captured({"sh", "-c", "if read line; then echo \"got $line\"; else echo eof; fi"});
  EXPECT_EQ(run.out, "eof\n");
}

TEST(Subprocess, OutputLargerThanAPipeIsReadWhileTheProgramRuns) {
  // 1 MiB on each stream: a reader that drained one stream to its end first
  // would never see the other finish.
  CapturedRun run = run_captured(
      {"sh", "-c", "head -c 1048576 /dev/zero; head -c 1048576 /dev/zero >&2; exit 0"});
  EXPECT_EQ(run.out.size(), 1048576u);
  EXPECT_EQ(run.err.size(), 1048576u);
}

TEST(Subprocess, AKilledProgramExitsWith128PlusTheSignal) {
  CapturedRun run = run_captured({"sh", "-c", "kill -TERM $$"});
  EXPECT_EQ(run.exit_code, 128 + SIGTERM);
}

TEST(Subprocess, AProgramNotInPathIsNamed) {
  try {
    run_captured({"dlaunch-no-such-program", "x"});
    FAIL() << "a missing program was run";
  } catch (const SystemError& error) {
    EXPECT_NE(std::string(error.what()).find("cannot run 'dlaunch-no-such-program': not found in PATH"),
              std::string::npos)
        << error.what();
  }
}

}  // namespace
}  // namespace dlaunch::util
