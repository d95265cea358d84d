// Which processes are children of a given one, read from /proc.
#include "util/child_processes.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <vector>

namespace dlaunch::util {
namespace {

bool contains(const std::vector<pid_t>& pids, pid_t pid) {
  return std::find(pids.begin(), pids.end(), pid) != pids.end();
}

pid_t start_sleeper() {
  pid_t pid = ::fork();
  if (pid == 0) {
    ::pause();
    ::_exit(0);
  }
  return pid;
}

TEST(ChildProcesses, ListsEveryChildAndOnlyChildren) {
  pid_t first = start_sleeper();
  pid_t second = start_sleeper();
  ASSERT_GT(first, 0);
  ASSERT_GT(second, 0);
  std::vector<pid_t> children = child_processes(::getpid());
  EXPECT_TRUE(contains(children, first));
  EXPECT_TRUE(contains(children, second));
  EXPECT_FALSE(contains(children, ::getpid()));
  EXPECT_FALSE(contains(children, ::getppid()));
  // The children's own list does not hold their siblings.
  EXPECT_FALSE(contains(child_processes(first), second));

  ::kill(first, SIGKILL);
  ::waitpid(first, nullptr, 0);
  children = child_processes(::getpid());
  EXPECT_FALSE(contains(children, first));
  EXPECT_TRUE(contains(children, second));
  ::kill(second, SIGKILL);
  ::waitpid(second, nullptr, 0);
}

TEST(ChildProcesses, AProcessWithoutChildrenHasNone) {
  pid_t lone = start_sleeper();
  EXPECT_TRUE(child_processes(lone).empty());
  EXPECT_TRUE(child_processes(999999999).empty());
  ::kill(lone, SIGKILL);
  ::waitpid(lone, nullptr, 0);
}

}  // namespace
}  // namespace dlaunch::util
