// The workers of a run's log folder alive on this host: found in a folder
// shaped like /proc by their TORCHELASTIC_ERROR_FILE, a worker's children
// and other folders' workers left out, the launcher known by its pid and
// start time; and one real child process found in the real /proc.
#include "jobs/live_workers.h"

#include <csignal>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../test_support/temp_dir.h"

namespace dlaunch::jobs {
namespace {

namespace fs = std::filesystem;

class LiveWorkers : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(log_dir());
    fs::create_directories(dir_.path() + "/other");
  }
  std::string log_dir() const { return dir_.path() + "/logs"; }
  std::string proc() const { return dir_.path() + "/proc"; }

  // A process PID, child of PARENT, started at START ticks, with ENVIRON
  // (readable) or none (another user's, or a launcher that hides itself).
  void process(int pid, int parent, int start, const std::optional<std::string>& environ) {
    const std::string folder = proc() + "/" + std::to_string(pid);
    fs::create_directories(folder);
    std::ofstream(folder + "/stat") << pid << " (a (b) c) S " << parent
                                    << " 1 1 0 -1 4194304 0 0 0 0 0 0 0 0 20 0 1 0 " << start << " 1000 100\n";
    if (environ) std::ofstream(folder + "/environ") << *environ;
    std::ofstream(folder + "/comm") << (environ ? "bash\n" : "dlaunch\n");
  }
  static std::string environ_of(const std::string& error_file, int local_rank, int group_rank) {
    using namespace std::string_literals;
    return "PATH=/bin\0TORCHELASTIC_ERROR_FILE="s + error_file + "\0LOCAL_RANK="s + std::to_string(local_rank) +
           "\0GROUP_RANK="s + std::to_string(group_rank) + "\0"s;
  }
  std::string error_file(int attempt, int rank) const {
    return log_dir() + "/attempt_" + std::to_string(attempt) + "/rank" + std::to_string(rank) + "/error.json";
  }

  test_support::TempDir dir_;
};

TEST_F(LiveWorkers, FindsTheFoldersWorkersAndTheirLauncher) {
  process(100, 1, 500, std::nullopt);  // the launcher: its memory hidden
  process(102, 100, 600, environ_of(error_file(1, 3), 1, 0));
  process(101, 100, 600, environ_of(error_file(1, 2), 0, 0));
  auto workers = find_live_workers(log_dir(), proc());
  ASSERT_EQ(workers.size(), 2u);
  EXPECT_EQ(workers[0].pid, 101);
  EXPECT_EQ(workers[0].rank, 2);
  EXPECT_EQ(workers[0].local_rank, 0);
  EXPECT_EQ(workers[0].attempt, 1);
  EXPECT_EQ(workers[1].rank, 3);
  EXPECT_EQ(workers[1].launcher, (ProcessIdentity{100, 500}));
  EXPECT_EQ(describe_live_workers(workers), "ranks 2-3 of attempt 1 (pids 101, 102), launcher pid 100");
  EXPECT_FALSE(launcher_gone(workers));
}

// Its launcher killed past its watchdog: the workers were left to init.
TEST_F(LiveWorkers, WorkersLeftWithoutALauncherSayIt) {
  process(1, 0, 1, "HOME=/");
  process(101, 1, 600, environ_of(error_file(0, 0), 0, 0));
  auto workers = find_live_workers(log_dir(), proc());
  ASSERT_EQ(workers.size(), 1u);
  EXPECT_TRUE(launcher_gone(workers));
  EXPECT_EQ(describe_live_workers(workers), "rank 0 of attempt 0 (pid 101), left to pid 1, their launcher gone");
}

TEST_F(LiveWorkers, LeavesOutAWorkersChildrenAndOtherFoldersWorkers) {
  process(100, 1, 500, std::nullopt);
  process(101, 100, 600, environ_of(error_file(0, 0), 0, 0));
  process(103, 101, 700, environ_of(error_file(0, 0), 0, 0));  // python started by the worker's shell
  process(104, 100, 600, environ_of(dir_.path() + "/other/attempt_0/rank1/error.json", 1, 0));
  process(105, 100, 600, "PATH=/bin");
  auto workers = find_live_workers(log_dir(), proc());
  ASSERT_EQ(workers.size(), 1u);
  EXPECT_EQ(workers[0].pid, 101);
}

TEST_F(LiveWorkers, TheFolderMaybeSpelledAnotherWay) {
  process(100, 1, 500, std::nullopt);
  process(101, 100, 600, environ_of(dir_.path() + "/other/../logs/attempt_0/rank0/error.json", 0, 0));
  EXPECT_EQ(find_live_workers(log_dir(), proc()).size(), 1u);
}

TEST_F(LiveWorkers, APidUsedAgainIsAnotherProcess) {
  process(100, 1, 500, std::nullopt);
  EXPECT_TRUE(still_running({100, 500}, proc()));
  EXPECT_FALSE(still_running({100, 501}, proc()));
  EXPECT_FALSE(still_running({99, 500}, proc()));
}

// A real process with a worker's error file in its environment.
TEST_F(LiveWorkers, FindsARealChildInTheRealProc) {
  std::string marker = "TORCHELASTIC_ERROR_FILE=" + error_file(0, 5);
  std::string rank = "LOCAL_RANK=5";
  char* child_environ[] = {marker.data(), rank.data(), nullptr};
  char sleep[] = "sleep", seconds[] = "30";
  char* argv[] = {sleep, seconds, nullptr};
  pid_t pid = 0;
  ASSERT_EQ(::posix_spawnp(&pid, "sleep", nullptr, nullptr, argv, child_environ), 0);
  // The child's /proc shows its new environment a moment after the spawn returns.
  std::vector<LiveWorker> workers;
  for (int look = 0; look < 200 && workers.empty(); ++look) {
    workers = find_live_workers(log_dir());
    if (workers.empty()) ::usleep(10000);
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  ASSERT_EQ(workers.size(), 1u);
  EXPECT_EQ(workers[0].pid, pid);
  EXPECT_EQ(workers[0].rank, 5);
  EXPECT_EQ(workers[0].launcher.pid, ::getpid());
  EXPECT_TRUE(still_running(workers[0].launcher));
  EXPECT_FALSE(still_running({pid, 0}));
}

}  // namespace
}  // namespace dlaunch::jobs
