// cgroup v2: this process's own cgroup found, everything in a cgroup killed
// (also what left its process group, also in cgroups below it), and a
// cgroup removed with what is below it. Skipped where this process cannot
// make cgroups (no cgroup v2, or no delegation).
#include "util/cgroup.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "process/worker_process.h"
#include "util/environment.h"
#include "util/fd.h"

namespace dlaunch::util {
namespace {

using namespace std::chrono_literals;

std::string file_text(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// True when FD reaches end-of-file within 10 s.
bool reaches_eof(int fd) {
  auto give_up = std::chrono::steady_clock::now() + 10s;
  char buffer[256];
  while (std::chrono::steady_clock::now() < give_up) {
    pollfd ready{fd, POLLIN, 0};
    if (::poll(&ready, 1, 100) <= 0) continue;
    ssize_t got = read_retrying(fd, buffer, sizeof(buffer));
    if (got <= 0) return got == 0;
  }
  return false;
}

int reap(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

// A new cgroup below this process's own, for one test; removed afterwards.
class CgroupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto own = own_cgroup_dir();
    if (!own) GTEST_SKIP() << "this process is in no cgroup v2 hierarchy";
    dir_ = *own + "/dlaunch-unit-test-" + std::to_string(::getpid());
    if (::mkdir(dir_.c_str(), 0755) != 0) {
      int error = errno;
      dir_.clear();
      GTEST_SKIP() << "no cgroup v2 delegation here: cannot create a cgroup in " << *own << " ("
                   << std::strerror(error) << ")";
    }
  }
  void TearDown() override {
    if (dir_.empty()) return;
    kill_cgroup(dir_);
    remove_cgroup(dir_, 5000ms);
  }

  // A worker started inside the cgroup FOLDER running the shell SCRIPT.
  process::StartedWorker start_in(const std::string& folder, const std::string& script) {
    Fd procs(::open((folder + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC));
    EXPECT_TRUE(procs.valid()) << folder;
    auto worker =
        process::start_worker({"/bin/sh", "-c", script}, Environment::from_process(), -1, procs.get());
    process::ExecResult result = process::confirm_exec(worker);
    EXPECT_EQ(result.error, 0) << (result.joining_cgroup ? "joining the cgroup: " : "exec: ")
                               << std::strerror(result.error);
    return worker;
  }

  std::string dir_;
};

TEST(Cgroup, OwnCgroupDirHoldsThisProcess) {
  auto own = own_cgroup_dir();
  if (!own) GTEST_SKIP() << "this process is in no cgroup v2 hierarchy";
  ASSERT_TRUE(std::filesystem::is_directory(*own)) << *own;
  std::istringstream procs(file_text(*own + "/cgroup.procs"));
  bool found = false;
  for (pid_t pid; procs >> pid;) found = found || pid == ::getpid();
  EXPECT_TRUE(found) << *own << "/cgroup.procs does not list " << ::getpid();
}

TEST_F(CgroupTest, KillCgroupKillsEverythingInItAlsoWhatLeftItsGroup) {
  // The leader, a child in its group and a setsid daemon, all holding stdout.
  auto worker = start_in(dir_, "setsid sleep 300 & sleep 300 & exec sleep 300");
  // It joined the cgroup before its exec.
  std::string membership = file_text("/proc/" + std::to_string(worker.pid) + "/cgroup");
  EXPECT_NE(membership.find(dir_.substr(dir_.rfind('/')) + "\n"), std::string::npos) << membership;
  kill_cgroup(dir_);
  bool all_gone = reaches_eof(worker.stdout_pipe.get());
  ::kill(-worker.pid, SIGKILL);  // only does something when the test fails
  int status = reap(worker.pid);
  EXPECT_TRUE(all_gone);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
  EXPECT_TRUE(remove_cgroup(dir_, 5000ms));
  EXPECT_FALSE(std::filesystem::exists(dir_));
}

TEST_F(CgroupTest, KillCgroupReachesTheCgroupsBelow) {
  std::string below = dir_ + "/below";
  ASSERT_EQ(::mkdir(below.c_str(), 0755), 0);
  auto worker = start_in(below, "exec sleep 300");
  kill_cgroup(dir_);
  bool gone = reaches_eof(worker.stdout_pipe.get());
  ::kill(worker.pid, SIGKILL);  // only does something when the test fails
  int status = reap(worker.pid);
  EXPECT_TRUE(gone);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
}

TEST_F(CgroupTest, RemoveCgroupTakesTheCgroupsBelowAndWaitsOnlyForProcesses) {
  ASSERT_EQ(::mkdir((dir_ + "/a").c_str(), 0755), 0);
  ASSERT_EQ(::mkdir((dir_ + "/a/b").c_str(), 0755), 0);
  auto worker = start_in(dir_ + "/a/b", "exec sleep 300");
  // A live process keeps its cgroup: not removed, and it says why.
  errno = 0;
  EXPECT_FALSE(remove_cgroup(dir_, 0ms));
  EXPECT_EQ(errno, EBUSY);
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/a/b"));
  ::kill(worker.pid, SIGKILL);
  reap(worker.pid);
  EXPECT_TRUE(remove_cgroup(dir_, 5000ms));
  EXPECT_FALSE(std::filesystem::exists(dir_));
  EXPECT_TRUE(remove_cgroup(dir_, 0ms));  // already gone
}

}  // namespace
}  // namespace dlaunch::util
