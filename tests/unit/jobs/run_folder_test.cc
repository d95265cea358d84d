// A --log-dir of dlaunch run read back as a job: found by its records,
// its status from result.json (the failed rank and its code), RUNNING
// from its workers on this host, UNKNOWN saying why when neither tells; an
// earlier run's result.json in a folder used again is not this run's; the
// end of a follow when the launcher seen is gone.
#include "jobs/run_folder.h"

#include <filesystem>
#include <fstream>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "../test_support/files.h"
#include "../test_support/input_error.h"
#include "../test_support/temp_dir.h"
#include "jobs/job_lookup.h"

namespace dlaunch::jobs {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

using test_support::write_file;

class RunFolder : public ::testing::Test {
 protected:
  std::string run() const { return dir_.path() + "/run"; }
  std::string proc() const { return dir_.path() + "/proc"; }

  // What a single node's dlaunch run --nproc-per-node 2 leaves when its
  // workers have started attempt ATTEMPT.
  void started(int attempt = 0) {
    const std::string folder = run() + "/attempt_" + std::to_string(attempt);
    write_file(folder + "/node0.json", R"({"node_rank": 0, "host": "vm", "ranks": [0, 1], "round": 0, "job": ""})");
    write_file(folder + "/rank0/stdout.log", "rank 0 hello\n");
    write_file(folder + "/rank1/stderr.log", "rank 1 fails\n");
  }
  void failed() {
    write_file(run() + "/result.json", R"({"exit_code": 3, "state": "FAILED", "restarts": 0, "job": "",
      "failure": "rank 1 (local rank 1) on vm (node 0) exited with code 3",
      "failure_summary": "dlaunch: first failure: rank 1 (local rank 1) on vm (node 0) exited with code 3\n",
      "started": "2026-12-05T09:00:26", "ended": "2026-12-05T09:00:27", "written_by": "vm"})");
  }
  // A process in the fake /proc: the launcher (no environ) or a worker of RANK.
  void process(int pid, int parent, const std::string& environ = "") {
    const std::string folder = proc() + "/" + std::to_string(pid);
    write_file(folder + "/stat", std::to_string(pid) + " (w) S " + std::to_string(parent) +
                                " 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 777 1000 100\n");
    if (!environ.empty()) write_file(folder + "/environ", environ);
    write_file(folder + "/comm", environ.empty() ? "dlaunch\n" : "python3\n");
  }
  std::string worker_environ(int rank) const {
    using namespace std::string_literals;
    return "TORCHELASTIC_ERROR_FILE="s + run() + "/attempt_0/rank" + std::to_string(rank) + "/error.json\0"s;
  }

  test_support::TempDir dir_;
};

TEST_F(RunFolder, IsKnownByItsRecordsAndNotByConfigJson) {
  fs::create_directories(run());
  EXPECT_FALSE(is_run_log_dir(run()));  // nothing started yet
  started();
  EXPECT_TRUE(is_run_log_dir(run()));
  EXPECT_EQ(logs_folder(run()), run());
  write_file(run() + "/config.json", "{}");
  EXPECT_FALSE(is_run_log_dir(run()));  // a submission's folder
}

TEST_F(RunFolder, FindJobTakesALogDirAndSaysWhatElseItTakes) {
  started();
  FoundJob found = find_job(run(), {});
  EXPECT_TRUE(found.record.run_log_dir);
  EXPECT_EQ(found.record.nodes, 1);
  EXPECT_EQ(found.record.gpus_per_node, 2);
  fs::create_directories(dir_.path() + "/plain");
  EXPECT_THAT(test_support::input_error_of([&] { (void)find_job(dir_.path() + "/plain", {}); }),
              HasSubstr("a --log-dir of dlaunch run or dlaunch ssh"));
}

TEST_F(RunFolder, AFailedRunNamesTheRankAndItsExitCode) {
  started();
  failed();
  JobStatus status = run_status(read_run_folder(run()), {});
  EXPECT_EQ(state_text(status), "FAILED (exit 3)");
  EXPECT_THAT(status.failure, HasSubstr("rank 1 (local rank 1)"));
  EXPECT_THAT(status.failure_summary, HasSubstr("exited with code 3"));
  EXPECT_THAT(status.source, HasSubstr("result.json"));
  EXPECT_EQ(read_run_folder(run()).submitted, "2026-12-05T09:00:26");
  EXPECT_EQ(run_ending(run()), "FAILED with exit code 3 at 2026-12-05T09:00:27");
}

TEST_F(RunFolder, RunningWhileItsWorkersRunHere) {
  started();
  LiveWorker worker{1234, 0, 0, 0, 0, {1200, 99}, true};
  JobStatus status = run_status(read_run_folder(run()), {worker});
  EXPECT_EQ(status.state, "RUNNING");
  EXPECT_THAT(status.source, HasSubstr("pid 1234"));
  EXPECT_THAT(status.source, HasSubstr("launcher pid 1200"));
}

TEST_F(RunFolder, WorkersWithoutTheirLauncherAreNotARunningRun) {
  started();
  LiveWorker orphan{1234, 0, 0, 0, 0, {1, 1}, false};
  JobStatus status = run_status(read_run_folder(run()), {orphan});
  EXPECT_EQ(status.state, "UNKNOWN");
  EXPECT_THAT(status.source, HasSubstr("the launcher is gone while workers still run on this host"));
}

TEST_F(RunFolder, UnknownSaysWhyTheFolderCannotTell) {
  started();
  JobStatus status = run_status(read_run_folder(run()), {});
  EXPECT_EQ(status.state, "UNKNOWN");
  EXPECT_THAT(status.source, HasSubstr("no worker of this folder runs on this host"));
  EXPECT_THAT(status.source, HasSubstr("its launcher was killed"));
  EXPECT_THAT(status.source, HasSubstr("its logs were last written at"));
}

// --log-dir used again: the earlier run's result stays until this one ends.
TEST_F(RunFolder, AnEarlierRunsResultIsNotThisRunsEnd) {
  started();
  failed();
  fs::last_write_time(run() + "/result.json", fs::file_time_type::clock::now() - std::chrono::hours(1));
  EXPECT_FALSE(run_result(run()));
  EXPECT_FALSE(run_ending(run()));
  EXPECT_EQ(run_status(read_run_folder(run()), {}).state, "UNKNOWN");
}

TEST_F(RunFolder, AMultiNodeResultOfAnotherIncarnationIsAnEarlierRuns) {
  write_file(run() + "/attempt_0/node0.json", R"({"node_rank": 0, "ranks": [0], "job": "b"})");
  write_file(run() + "/result.json", R"({"state": "COMPLETED", "exit_code": 0, "job": "a"})");
  EXPECT_FALSE(run_result(run()));
  write_file(run() + "/result.json", R"({"state": "COMPLETED", "exit_code": 0, "job": "b"})");
  EXPECT_TRUE(run_result(run()));
}

TEST_F(RunFolder, FollowingEndsWhenTheLauncherSeenIsGone) {
  started();
  process(1200, 1);
  process(1234, 1200, worker_environ(0));
  RunEndWatch watch(run(), proc());
  std::string note;
  EXPECT_FALSE(watch.ended(&note));
  EXPECT_EQ(note, "");
  fs::remove_all(proc() + "/1234");  // between two attempts: the launcher lives
  EXPECT_FALSE(watch.ended(&note));
  fs::remove_all(proc() + "/1200");
  EXPECT_TRUE(watch.ended(&note));
  EXPECT_THAT(note, HasSubstr("launcher of " + run() + " (pid 1200) is gone without writing a result.json"));
}

TEST_F(RunFolder, FollowingARunNotSeenHereSaysSoOnceAndEndsWithItsResult) {
  started();
  fs::create_directories(proc());
  RunEndWatch watch(run(), proc());
  std::string note;
  EXPECT_FALSE(watch.ended(&note));
  EXPECT_THAT(note, HasSubstr("no worker of " + run() + " runs on this host"));
  note.clear();
  EXPECT_FALSE(watch.ended(&note));
  EXPECT_EQ(note, "");
  failed();
  EXPECT_TRUE(watch.ended(&note));
}

TEST_F(RunFolder, SavedStackReportsAreItsTextReports) {
  write_file(run() + "/stacks/hang_attempt_0.txt", "report");
  write_file(run() + "/stacks/hang_attempt_0.json", "{}");
  EXPECT_EQ(saved_stack_reports(run()), std::vector<std::string>{run() + "/stacks/hang_attempt_0.txt"});
}

}  // namespace
}  // namespace dlaunch::jobs
