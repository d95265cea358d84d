// The exit-code table and the one translation between wait statuses,
// signals and exit codes.
#include "util/exit_codes.h"

#include <csignal>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

namespace dlaunch::util {
namespace {

// The wait status of a child that ran BODY in a fork.
template <typename Body>
int wait_status_of_child(Body body) {
  pid_t pid = ::fork();
  if (pid == 0) body();
  int status = 0;
  EXPECT_EQ(::waitpid(pid, &status, 0), pid);
  return status;
}

TEST(ExitCodes, TheTableHoldsTheNumbersTheDocsPromise) {
  // docs/EXIT_CODES.md names these numbers; scripts compare against them.
  EXPECT_EQ(kExitSuccess, 0);
  EXPECT_EQ(kExitFailure, 1);
  EXPECT_EQ(kExitUsage, 2);
  EXPECT_EQ(kExitHang, 124);
  EXPECT_EQ(kExitCannotRun, 127);
  EXPECT_EQ(exit_code_of_signal(SIGKILL), 137);
  EXPECT_EQ(exit_code_of_signal(SIGTERM), 143);
}

TEST(ExitCodes, ACodeAbove128NamesItsSignalAndOthersNone) {
  EXPECT_EQ(signal_of_exit_code(137), SIGKILL);
  EXPECT_EQ(signal_of_exit_code(129), SIGHUP);
  EXPECT_EQ(signal_of_exit_code(128 + 64), 64);
  for (int plain : {0, 1, 2, 124, 127, 128, 128 + 65, 255, -1}) EXPECT_EQ(signal_of_exit_code(plain), std::nullopt) << plain;
  for (int signal = 1; signal <= 64; ++signal) EXPECT_EQ(signal_of_exit_code(exit_code_of_signal(signal)), signal);
}

TEST(ExitCodes, AWaitStatusGivesTheChildsOwnCodeOr128PlusItsSignal) {
  int exited = wait_status_of_child([] { ::_exit(3); });
  EXPECT_EQ(exit_code_of_wait_status(exited), 3);
  EXPECT_EQ(signal_of_wait_status(exited), 0);

  int killed = wait_status_of_child([] {
    ::signal(SIGTERM, SIG_DFL);
    ::raise(SIGTERM);
    ::_exit(0);
  });
  EXPECT_EQ(exit_code_of_wait_status(killed), 143);
  EXPECT_EQ(signal_of_wait_status(killed), SIGTERM);
}

TEST(ExitCodes, AStoppedChildHasNoExitCodeYet) {
  pid_t pid = ::fork();
  if (pid == 0) {
    ::raise(SIGSTOP);
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, WUNTRACED), pid);
  EXPECT_EQ(exit_code_of_wait_status(status), -1);
  EXPECT_EQ(signal_of_wait_status(status), 0);
  ::kill(pid, SIGKILL);
  ::waitpid(pid, &status, 0);
}

TEST(ExitCodes, ACodeIsDescribedWithItsSignalWhenItHasOne) {
  EXPECT_EQ(describe_exit_code(0), "exit code 0");
  EXPECT_EQ(describe_exit_code(124), "exit code 124");
  EXPECT_EQ(describe_exit_code(137), "exit code 137 (SIGKILL)");
  EXPECT_EQ(describe_exit_code(130), "exit code 130 (SIGINT)");
  // A signal without a name in the table still says which one it was.
  EXPECT_EQ(describe_exit_code(128 + 40), "exit code 168 (signal 40)");
}

}  // namespace
}  // namespace dlaunch::util
