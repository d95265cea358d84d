// The children an event loop runs: each group signalled while its leader
// runs, SIGKILL after the grace period to a group that ignores SIGTERM,
// and exits reaped without waiting, leaders told from other children.
#include "process/process_groups.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <string>
#include <vector>

#include "process/event_loop.h"
#include "process/worker_process.h"
#include "util/environment.h"

namespace dlaunch::process {
namespace {

using namespace std::chrono_literals;

// A child in a group of its own running the shell SCRIPT.
pid_t start_shell(const std::string& script) {
  StartedWorker started = start_worker({"/bin/sh", "-c", script}, util::Environment::from_process());
  EXPECT_EQ(confirm_exec(started).error, 0);
  return started.pid;
}

// Reaps until PID is reported (bounded: each round waits 20 ms at most for
// the loop's deadlines, which the grace period's SIGKILL is); the exits of
// PID reported, other children (left by other tests) aside.
std::vector<ChildExit> reap_until_exited(EventLoop& loop, ProcessGroups& groups, pid_t pid) {
  std::vector<ChildExit> exits;
  for (auto give_up = EventLoop::Clock::now() + 10s; exits.empty() && EventLoop::Clock::now() < give_up;) {
    loop.run_once(20ms);
    groups.reap([&](const ChildExit& child) {
      if (child.pid == pid) exits.push_back(child);
    });
  }
  return exits;
}

TEST(ProcessGroups, SignalReachesEveryRunningGroupAndReapReportsTheExit) {
  EventLoop loop;
  ProcessGroups groups(loop);
  pid_t leader = start_shell("exec sleep 30");
  groups.add(leader);
  EXPECT_EQ(groups.running(), 1u);
  groups.signal(SIGTERM);
  auto exits = reap_until_exited(loop, groups, leader);
  ASSERT_EQ(exits.size(), 1u);
  EXPECT_EQ(exits[0].pid, leader);
  EXPECT_TRUE(exits[0].leader);
  EXPECT_EQ(exits[0].signal, SIGTERM);
  EXPECT_EQ(exits[0].exit_code, 128 + SIGTERM);
  EXPECT_EQ(groups.running(), 0u);
}

TEST(ProcessGroups, AnExitCodeIsReportedAsIs) {
  EventLoop loop;
  ProcessGroups groups(loop);
  pid_t leader = start_shell("exit 7");
  groups.add(leader);
  auto exits = reap_until_exited(loop, groups, leader);
  ASSERT_EQ(exits.size(), 1u);
  EXPECT_EQ(exits[0].exit_code, 7);
  EXPECT_EQ(exits[0].signal, 0);
}

TEST(ProcessGroups, AGroupThatIgnoresSigtermIsKilledAfterTheGrace) {
  EventLoop loop;
  ProcessGroups groups(loop);
  // Ignores SIGTERM, and says so before the test stops it.
  StartedWorker started =
      start_worker({"/bin/sh", "-c", "trap '' TERM; echo ready; while :; do sleep 1; done"},
                   util::Environment::from_process());
  ASSERT_EQ(confirm_exec(started).error, 0);
  char byte;
  ASSERT_EQ(::read(started.stdout_pipe.get(), &byte, 1), 1);  // the trap is set
  groups.add(started.pid);
  auto begun = EventLoop::Clock::now();
  groups.stop(200ms);
  auto exits = reap_until_exited(loop, groups, started.pid);
  ASSERT_FALSE(exits.empty());
  EXPECT_EQ(exits.back().signal, SIGKILL);
  EXPECT_GE(EventLoop::Clock::now() - begun, 200ms) << "killed before the grace period ended";
}

TEST(ProcessGroups, AZeroGraceKillsAtOnce) {
  EventLoop loop;
  ProcessGroups groups(loop);
  pid_t leader = start_shell("trap '' TERM; while :; do sleep 1; done");
  groups.add(leader);
  groups.kill_after(0ms);
  auto exits = reap_until_exited(loop, groups, leader);
  ASSERT_EQ(exits.size(), 1u);
  EXPECT_EQ(exits[0].signal, SIGKILL);
}

TEST(ProcessGroups, AForgottenLeaderIsNotSignalledAndOtherChildrenAreNotLeaders) {
  EventLoop loop;
  ProcessGroups groups(loop);
  pid_t leader = start_shell("exec sleep 30");
  pid_t other = start_shell("exit 3");  // a child the groups were never told of
  groups.add(leader);
  groups.forget(leader);
  EXPECT_FALSE(groups.running(leader));
  groups.signal(SIGKILL);  // reaches no one: the only group was forgotten
  int status = 0;
  ASSERT_EQ(::waitpid(other, &status, 0), other);
  groups.add(leader);
  EXPECT_EQ(::kill(leader, 0), 0) << "a forgotten group was signalled";
  ::kill(-leader, SIGTERM);
  auto exits = reap_until_exited(loop, groups, leader);
  ASSERT_EQ(exits.size(), 1u);
  EXPECT_EQ(exits[0].signal, SIGTERM);
}

TEST(ProcessGroups, ReapTellsAChildThatIsNoLeader) {
  EventLoop loop;
  ProcessGroups groups(loop);
  pid_t other = start_shell("exit 5");
  auto exits = reap_until_exited(loop, groups, other);
  ASSERT_EQ(exits.size(), 1u);
  EXPECT_EQ(exits[0].pid, other);
  EXPECT_FALSE(exits[0].leader);
  EXPECT_EQ(exits[0].exit_code, 5);
}

}  // namespace
}  // namespace dlaunch::process
