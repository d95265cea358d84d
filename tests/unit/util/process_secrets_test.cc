// Keeping the launcher's secrets from the user's other processes
// (util/process_secrets.h).
#include "util/process_secrets.h"

#include <gtest/gtest.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

namespace dlaunch::util {
namespace {

// In a child, so the test process stays dumpable (a debugger may attach).
TEST(ProcessSecrets, TheProcessBecomesNonDumpable) {
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (::prctl(PR_GET_DUMPABLE) != 1) ::_exit(2);
    hide_process_memory();
    ::_exit(::prctl(PR_GET_DUMPABLE) == 0 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

// The value is overwritten where it lies, not only unlinked from environ:
// /proc/PID/environ shows the memory the environment started in.
TEST(ProcessSecrets, AScrubbedVariableIsGoneAndItsValueOverwritten) {
  ASSERT_EQ(::setenv("DLAUNCH_TEST_SECRET", "hunter2-hunter2", 1), 0);
  char* value = std::getenv("DLAUNCH_TEST_SECRET");
  ASSERT_NE(value, nullptr);
  const std::size_t size = std::strlen(value);
  scrub_environment_variable("DLAUNCH_TEST_SECRET");
  EXPECT_EQ(std::getenv("DLAUNCH_TEST_SECRET"), nullptr);
  // glibc keeps a setenv'd string allocated after unsetenv: still readable here.
  EXPECT_EQ(std::string(value, size), std::string(size, '\0'));
  scrub_environment_variable("DLAUNCH_TEST_SECRET");  // absent: nothing to do
}

}  // namespace
}  // namespace dlaunch::util
