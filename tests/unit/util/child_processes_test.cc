// Which processes are children of a given one, read from /proc.
#include "util/child_processes.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <sys/prctl.h>
#include <thread>
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

// The kernel's per-thread lists: a child forked by another thread of the
// process is a child of the process all the same.
TEST(ChildProcesses, ChildrenOfEveryThreadAreListed) {
  if (!child_processes_from_task_lists(::getpid())) GTEST_SKIP() << "kernel without /proc/PID/task/TID/children";
  pid_t from_thread = -1;
  std::thread([&] { from_thread = start_sleeper(); }).join();
  ASSERT_GT(from_thread, 0);
  EXPECT_TRUE(contains(child_processes(::getpid()), from_thread));
  EXPECT_TRUE(contains(*child_processes_from_task_lists(::getpid()), from_thread));
  ::kill(from_thread, SIGKILL);
  ::waitpid(from_thread, nullptr, 0);
}

// What --kill-escaped subreaper relies on: an orphan of a child is adopted
// by the subreaper and then listed as its child, by both ways of reading.
TEST(ChildProcesses, AnAdoptedOrphanIsListedByBothWays) {
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  pid_t middle = ::fork();
  if (middle == 0) {
    pid_t orphan = start_sleeper();
    (void)!::write(pipe_fds[1], &orphan, sizeof(orphan));
    ::_exit(0);
  }
  pid_t orphan = -1;
  ASSERT_EQ(::read(pipe_fds[0], &orphan, sizeof(orphan)), static_cast<ssize_t>(sizeof(orphan)));
  ::waitpid(middle, nullptr, 0);  // once reaped, its child has been handed to us
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
  EXPECT_TRUE(contains(child_processes(::getpid()), orphan));
  EXPECT_TRUE(contains(child_processes_by_scan(::getpid()), orphan));
  if (auto listed = child_processes_from_task_lists(::getpid())) {
    EXPECT_TRUE(contains(*listed, orphan));
  }
  ::kill(orphan, SIGKILL);
  ::waitpid(orphan, nullptr, 0);
  ::prctl(PR_SET_CHILD_SUBREAPER, 0);
}

TEST(ChildProcesses, TheScanAndTheKernelListsAgree) {
  pid_t first = start_sleeper();
  pid_t second = start_sleeper();
  std::vector<pid_t> scanned = child_processes_by_scan(::getpid());
  EXPECT_TRUE(contains(scanned, first));
  EXPECT_TRUE(contains(scanned, second));
  if (auto listed = child_processes_from_task_lists(::getpid())) {
    std::sort(scanned.begin(), scanned.end());
    std::sort(listed->begin(), listed->end());
    EXPECT_EQ(*listed, scanned);
  }
  EXPECT_FALSE(child_processes_from_task_lists(999999999).has_value() &&
               !child_processes_from_task_lists(999999999)->empty());
  ::kill(first, SIGKILL);
  ::kill(second, SIGKILL);
  ::waitpid(first, nullptr, 0);
  ::waitpid(second, nullptr, 0);
}

}  // namespace
}  // namespace dlaunch::util
