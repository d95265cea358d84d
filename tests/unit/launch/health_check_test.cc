// The checks between rounds: the disk threshold and nvidia-smi's text
// judged as pure functions; a stand-in nvidia-smi in a PATH of the test's
// own; a --health-check command that fails, one that outlives its timeout
// and is killed with its children, one that floods its output.
#include "launch/health_check.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <string>
#include <thread>

#include "../test_support/files.h"
#include "../test_support/temp_dir.h"
#include "util/environment.h"

namespace dlaunch::launch {
namespace {

using namespace std::chrono_literals;

TEST(HealthCheckTest, DiskNeedsAGibibyteOrOnePercentOfASmallFileSystem) {
  constexpr std::uint64_t kGiB = 1ULL << 30;
  EXPECT_EQ(required_free_bytes(1000 * kGiB), kGiB);
  EXPECT_EQ(required_free_bytes(10 * kGiB), 10 * kGiB / 100);
  EXPECT_FALSE(disk_problem(2 * kGiB, 1000 * kGiB, "/logs", "node7"));
  EXPECT_FALSE(disk_problem(kGiB / 5, 10 * kGiB, "/logs", "node7"));
  auto problem = disk_problem(kGiB / 2, 1000 * kGiB, "/logs", "node7");
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("health check 'disk' failed on node7"), std::string::npos) << *problem;
  EXPECT_NE(problem->find("/logs"), std::string::npos) << *problem;
  EXPECT_NE(problem->find("--log-dir"), std::string::npos) << *problem;
}

TEST(HealthCheckTest, GpuMemoryHeldAboveTheLimitNamesTheGpu) {
  EXPECT_FALSE(gpu_memory_problem("0\n3\n", 1024, "node7"));
  EXPECT_FALSE(gpu_memory_problem("", 1024, "node7"));
  auto problem = gpu_memory_problem("0\n40536\n", 1024, "node7");
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("'gpu-memory' failed on node7"), std::string::npos) << *problem;
  EXPECT_NE(problem->find("GPU 1: 40536 MiB"), std::string::npos) << *problem;
  auto garbled = gpu_memory_problem("NVIDIA-SMI has failed\n", 1024, "node7");
  ASSERT_TRUE(garbled);
  EXPECT_NE(garbled->find("not MiB in use"), std::string::npos) << *garbled;
}

TEST(HealthCheckTest, LeftoverWorkersAreNamed) {
  EXPECT_FALSE(leftover_problem({}, {}, "node7"));
  auto problem = leftover_problem({4242}, {}, "node7");
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("'leftover-workers' failed on node7"), std::string::npos) << *problem;
  EXPECT_NE(problem->find("4242"), std::string::npos) << *problem;
}

class HealthChecksTest : public ::testing::Test {
 protected:
  // A PATH holding only the stand-ins the test writes, then the system's.
  util::Environment environment() const {
    return util::Environment({{"PATH", bin_ + ":/usr/bin:/bin"}});
  }

  void write_nvidia_smi(const std::string& body) const {
    std::string path = bin_ + "/nvidia-smi";
    test_support::write_file(path, "#!/bin/sh\n" + body + "\n");
    ::chmod(path.c_str(), 0755);
  }

  HealthChecks checks(std::optional<std::string> command, std::chrono::milliseconds timeout = 10s) {
    HealthCheckSettings settings;
    settings.command = std::move(command);
    settings.command_timeout = timeout;
    settings.gpu_wait = 0ms;
    settings.kernel_log = kernel_log_;
    return HealthChecks(settings, environment(), "node7", dir_.path(),
                        [this](const std::string& line) { said_.push_back(line); });
  }

  test_support::TempDir dir_;
  std::string bin_ = dir_.path() + "/bin";
  // A plain file stands in for /dev/kmsg: lines appended to it are "new".
  std::string kernel_log_ = make_kernel_log(dir_.path() + "/kmsg");
  std::vector<std::string> said_;

 private:
  static std::string make_kernel_log(const std::string& path) {
    test_support::write_file(path, "6,1,10,-;NVRM: Xid (PCI:0000:3b:00): 79, before the launcher started\n");
    return path;
  }
};

TEST_F(HealthChecksTest, AHardwareXidLoggedSinceTheLastCheckFails) {
  auto health = checks(std::nullopt);
  EXPECT_FALSE(health.run(1, {}, "")) << "the Xid logged before the checks were made is not theirs";
  std::ofstream(kernel_log_, std::ios::app) << "4,2,20,-;NVRM: Xid (PCI:0000:3b:00): 13, Graphics Exception\n";
  EXPECT_FALSE(health.run(2, {}, "")) << "Xid 13 is a program's own fault";
  std::ofstream(kernel_log_, std::ios::app)
      << "4,3,30,-;NVRM: Xid (PCI:0000:3b:00): 79, pid=4711, name=python3, GPU has fallen off the bus.\n";
  auto problem = health.run(3, {}, "");
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("'gpu-errors' failed on node7"), std::string::npos) << *problem;
  EXPECT_NE(problem->find("Xid 79 (the GPU has fallen off the bus)"), std::string::npos) << *problem;
  EXPECT_FALSE(health.run(4, {}, "")) << "each line is judged once";
}

TEST_F(HealthChecksTest, UncorrectedEccErrorsFail) {
  write_nvidia_smi("case \"$1\" in --query-gpu=index,ecc*) echo '0, 0, No'; echo '1, 3, No';; *) echo 0; echo 0;; "
                   "esac");
  auto problem = checks(std::nullopt).run(1, {}, "");
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("GPU 1: 3 uncorrected ECC errors"), std::string::npos) << *problem;
  write_nvidia_smi("case \"$1\" in --query-gpu=index,ecc*) echo '0, [N/A], [N/A]';; *) echo 0;; esac");
  EXPECT_FALSE(checks(std::nullopt).run(1, {}, ""));
}

TEST_F(HealthChecksTest, AnUnreadableKernelLogIsSaidOnceWhereThereAreGpus) {
  write_nvidia_smi("echo 0");
  kernel_log_ = dir_.path() + "/no-such-kmsg";
  auto health = checks(std::nullopt);
  EXPECT_FALSE(health.run(1, {}, ""));
  EXPECT_FALSE(health.run(2, {}, ""));
  ASSERT_EQ(said_.size(), 1U);
  EXPECT_NE(said_[0].find("reads no Xid errors on node7"), std::string::npos) << said_[0];
  EXPECT_NE(said_[0].find("no-such-kmsg"), std::string::npos) << said_[0];
}

TEST_F(HealthChecksTest, AllPassWithoutNvidiaSmiWhichIsSaidOnce) {
  auto health = checks(std::nullopt);
  EXPECT_FALSE(health.run(1, {}, ""));
  EXPECT_FALSE(health.run(2, {}, ""));
  ASSERT_EQ(said_.size(), 1U);
  EXPECT_NE(said_[0].find("no nvidia-smi"), std::string::npos) << said_[0];
}

TEST_F(HealthChecksTest, AStandInNvidiaSmiReportingMemoryInUseFails) {
  write_nvidia_smi("echo 0; echo 30000");
  auto problem = checks(std::nullopt).run(1, {}, "");
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("GPU 1: 30000 MiB"), std::string::npos) << *problem;
  write_nvidia_smi("echo 0; echo 12");
  EXPECT_FALSE(checks(std::nullopt).run(1, {}, ""));
  EXPECT_TRUE(said_.empty());
}

TEST_F(HealthChecksTest, AWorkerGroupStillAliveFails) {
  pid_t child = ::fork();
  if (child == 0) {
    ::setpgid(0, 0);
    ::pause();
    ::_exit(0);
  }
  ::setpgid(child, child);
  auto problem = checks(std::nullopt).run(1, {child}, "");
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find(std::to_string(child)), std::string::npos) << *problem;
  EXPECT_FALSE(checks(std::nullopt).run(1, {child}, ""));
}

TEST_F(HealthChecksTest, ALongCheckKeepsTheLauncherAliveMeanwhile) {
  // The command ends only once the keep-alive has been called three times
  // while it ran: a launcher whose checks outlast --heartbeat-timeout
  // must go on answering node 0 meanwhile.
  const std::string go = dir_.path() + "/go";
  int calls = 0;
  auto keep_alive = [&] {
    if (++calls == 3) test_support::write_file(go, "");
  };
  auto problem = checks("until [ -e '" + go + "' ]; do sleep 0.05; done", 60s).run(1, {}, "", keep_alive);
  EXPECT_FALSE(problem) << *problem;
  EXPECT_GE(calls, 3);
}

TEST_F(HealthChecksTest, AFailingCommandGivesItsCodeAndLastLines) {
  // The reason quotes the command too: only the output holds the message whole.
  const std::string command =
      "m=scratch; echo first; echo \"no $m mounted\" >&2; test \"$DLAUNCH_HEALTH_CHECK_ROUND\" = 9";
  auto problem = checks(command).run(1, {}, "");
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("exited with 1"), std::string::npos) << *problem;
  EXPECT_NE(problem->find("no scratch mounted"), std::string::npos) << *problem;
  EXPECT_NE(problem->find("on node7"), std::string::npos) << *problem;
  EXPECT_FALSE(checks("test \"$DLAUNCH_HEALTH_CHECK_ROUND\" = 9").run(9, {}, ""));
}

TEST_F(HealthChecksTest, ACommandPastItsTimeoutIsKilledWithItsChildren) {
  std::string pid_file = dir_.path() + "/child.pid";
  auto start = std::chrono::steady_clock::now();
  auto problem = checks("sleep 30 & echo $! > " + pid_file + "; wait", 500ms).run(1, {}, "");
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("killed with its process group"), std::string::npos) << *problem;
  pid_t grandchild = 0;
  std::ifstream(pid_file) >> grandchild;
  ASSERT_GT(grandchild, 0);
  // Killed, and reparented to init (or a subreaper) which reaps it soon.
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    ::waitpid(grandchild, nullptr, WNOHANG);  // ours, should an earlier test have made this process a subreaper
    gone = ::kill(grandchild, 0) != 0;
    if (!gone) std::this_thread::sleep_for(20ms);
  }
  EXPECT_TRUE(gone) << "the command's child " << grandchild << " outlived the timeout";
}

// A launcher told to stop (scancel) throws from its keep-alive: the check
// ends at once, its whole process group killed, not at its timeout.
TEST_F(HealthChecksTest, AStopDuringTheCommandKillsItWithItsChildrenAtOnce) {
  struct Stopped {};
  std::string pid_file = dir_.path() + "/child.pid";
  auto keep_alive = [&] {
    if (std::ifstream(pid_file).peek() != std::ifstream::traits_type::eof()) throw Stopped{};
  };
  auto health = checks("sleep 300 & echo $! > " + pid_file + "; wait", 600s);
  auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(health.run(1, {}, "", keep_alive), Stopped);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 60s) << "the stop waited for the command";
  pid_t grandchild = 0;
  std::ifstream(pid_file) >> grandchild;
  ASSERT_GT(grandchild, 0);
  bool gone = false;
  for (int i = 0; i < 500 && !gone; ++i) {
    ::waitpid(grandchild, nullptr, WNOHANG);
    gone = ::kill(grandchild, 0) != 0;
    if (!gone) std::this_thread::sleep_for(20ms);
  }
  EXPECT_TRUE(gone) << "the command's child " << grandchild << " outlived the stop";
}

TEST_F(HealthChecksTest, AFloodingCommandKeepsOnlyItsLastLines) {
  auto problem =
      checks("i=0; while [ $i -lt 200000 ]; do echo \"line $i\"; i=$((i+1)); done; exit 3").run(1, {}, "");
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("exited with 3"), std::string::npos);
  EXPECT_NE(problem->find("line 199999"), std::string::npos);
  EXPECT_EQ(problem->find("line 0 "), std::string::npos);
  EXPECT_LT(problem->size(), 1000U);
}

}  // namespace
}  // namespace dlaunch::launch
