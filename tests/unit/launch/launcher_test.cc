// dlaunch run's pipeline in-process: from a LaunchConfig and a coordinator
// factory to the job's exit code, with /bin/sh -c workers and the local
// coordinator: the worker output on the console, the failure summary, the
// exit code of the failed worker, restarts up to --max-restarts with
// TORCHELASTIC_RESTART_COUNT rising, and the program checked before anything
// is made.
//
// run_launcher writes to the process's console (util/console.h); the test
// captures stdout and stderr as tests/unit/cli/dlaunch_main_test.cc does.
// Workers write what the test needs to see to files in $OUT.
#include "launch/launcher.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>

#include "../test_support/temp_dir.h"
#include "../test_support/text.h"
#include "rendezvous/local_coordinator.h"
#include "util/error.h"
#include "util/exit_codes.h"
#include "util/ports.h"

namespace dlaunch::launch {
namespace {

using test_support::contains;

// The one-node job's coordinator, with this launcher in slot 1 holding
// node rank 0: as after node 0's host was lost and this launcher took the
// job over, so the job's verdict is this launcher's to act on.
class TakenOverCoordinator : public rendezvous::LocalCoordinator {
 public:
  using LocalCoordinator::LocalCoordinator;
  int slot() const override { return 1; }
  rendezvous::World join(int round) override {
    rendezvous::World world = LocalCoordinator::join(round);
    world.node_slots = {1};
    return world;
  }
};

class LauncherTest : public ::testing::Test {
 protected:
  // A one-node job of NPROC workers, each running the shell SCRIPT.
  LaunchConfig config(int nproc, const std::string& script, int max_restarts = 0) {
    LaunchConfig made;
    made.topology.nnodes = {1, "test"};
    made.topology.node_rank = {0, "test"};
    made.topology.nproc_per_node = {nproc, "test"};
    made.topology.master_addr = {"127.0.0.1", "test"};
    made.topology.run_id = {"t", "test"};
    made.command = {"/bin/sh", "-c", script};
    made.job.max_restarts = max_restarts;
    made.log_dir = dir_ + "/logs";
    made.kill_escaped = {KillEscaped::kOff, "test"};  // this test process stays no subreaper
    return made;
  }

  // Runs CONFIG with the local coordinator, as dlaunch run does for one
  // node; its exit code, and the console output in output_.
  int run(const LaunchConfig& launch) {
    std::map<std::string, std::string> variables = extra_environment_;
    variables.emplace("PATH", "/usr/bin:/bin");
    variables.emplace("OUT", dir_);
    util::Environment environment(variables);
    ::testing::internal::CaptureStdout();
    ::testing::internal::CaptureStderr();
    int code = -1;
    try {
      code = run_launcher(launch, environment, [&](process::SignalChannel&, const std::string& host, const std::string&) {
        ++coordinators_made_;
        host_ = host;
        if (taken_over_)
          return std::unique_ptr<rendezvous::LocalCoordinator>(std::make_unique<TakenOverCoordinator>("127.0.0.1", std::nullopt,
                                                        launch.topology.nproc_per_node.value, "t",
                                                        launch.job.max_restarts));
        return std::make_unique<rendezvous::LocalCoordinator>("127.0.0.1", std::nullopt,
                                                              launch.topology.nproc_per_node.value, "t",
                                                              launch.job.max_restarts, rendezvous::ForensicsSettings{},
                                                              launch.job.stop_repeated_failures);
      });
    } catch (...) {
      output_ = ::testing::internal::GetCapturedStdout() + ::testing::internal::GetCapturedStderr();
      throw;
    }
    output_ = ::testing::internal::GetCapturedStdout() + ::testing::internal::GetCapturedStderr();
    return code;
  }

  // A FIFO $OUT/NAME, for workers to meet at (its open waits for the other end).
  void fifo(const std::string& name) {
    std::string path = dir_ + "/" + name;
    ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0) << path;
  }

  // What a worker wrote to $OUT/NAME.
  std::string file(const std::string& name) {
    std::ifstream in(dir_ + "/" + name);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  // For run(): variables besides PATH and OUT; whether the coordinator is a TakenOverCoordinator.
  std::map<std::string, std::string> extra_environment_;
  bool taken_over_ = false;
  test_support::TempDir temp_;
  std::string dir_ = temp_.path();
  std::string output_;
  int coordinators_made_ = 0;
  std::string host_;
};

TEST_F(LauncherTest, AJobWhoseWorkersSucceedExitsWithZero) {
  int code = run(config(2, "echo hello $RANK of $WORLD_SIZE"));
  EXPECT_EQ(code, 0);
  EXPECT_EQ(coordinators_made_, 1);
  EXPECT_EQ(host_, util::local_host_name());
  EXPECT_TRUE(contains(output_, "[rank0]:hello 0 of 2\n"));
  EXPECT_TRUE(contains(output_, "[rank1]:hello 1 of 2\n"));
  EXPECT_FALSE(contains(output_, "job failed"));
}

// Without --max-restarts the first failure ends the job with that
// worker's code, and the summary names it with its last lines.
TEST_F(LauncherTest, AFailedWorkersCodeIsTheJobsAndTheSummaryNamesIt) {
  int code = run(config(2, "if [ $RANK = 1 ]; then echo 'about to fail' >&2; exit 3; fi"));
  EXPECT_EQ(code, 3);
  EXPECT_TRUE(contains(output_, "dlaunch: ==================== job failed ====================\n"));
  EXPECT_TRUE(contains(output_, "dlaunch: first failure: rank 1 (local rank 1) on " + util::local_host_name() +
                                    " (node 0) exited with code 3\n"));
  EXPECT_TRUE(contains(output_, "dlaunch:     | about to fail\n"));
  EXPECT_TRUE(contains(output_, "dlaunch: exit code 3\n"));
  EXPECT_FALSE(contains(output_, "restarting"));
}

TEST_F(LauncherTest, AKilledWorkerEndsTheJobWith128PlusTheSignal) {
  int code = run(config(1, "kill -KILL $$"));
  EXPECT_EQ(code, 128 + SIGKILL);
  EXPECT_TRUE(contains(output_, "was killed by SIGKILL (exit code 137)"));
}

// Rank 1 always fails, once rank 0 has written its count (they meet at a
// FIFO): with --retry-repeated-failures the job runs 1 + 2 rounds, each
// worker seeing its restart count, then fails with rank 1's code.
TEST_F(LauncherTest, EveryWorkerIsRestartedUpToMaxRestartsThenTheJobFails) {
  fifo("counted");
  LaunchConfig plain = config(2,
                              "echo $TORCHELASTIC_RESTART_COUNT of $TORCHELASTIC_MAX_RESTARTS >> \"$OUT/count.$RANK\"; "
                              "if [ $RANK = 0 ]; then echo > \"$OUT/counted\"; else read x < \"$OUT/counted\"; exit 3; fi",
                              /*max_restarts=*/2);
  plain.job.stop_repeated_failures = false;
  int code = run(plain);
  EXPECT_EQ(code, 3);
  EXPECT_EQ(file("count.0"), "0 of 2\n1 of 2\n2 of 2\n");
  EXPECT_EQ(file("count.1"), "0 of 2\n1 of 2\n2 of 2\n");
  EXPECT_TRUE(contains(output_, "restarting every worker (restart 1 of 2)\n"));
  EXPECT_TRUE(contains(output_, "restarting every worker (restart 2 of 2)\n"));
  EXPECT_FALSE(contains(output_, "restart 3 of"));
  EXPECT_TRUE(contains(output_, "dlaunch: exit code 3\n"));
  EXPECT_EQ(coordinators_made_, 1);  // one coordinator for every round
}

// The same failure twice with no progress between: the job stops after
// the second round, with util::kExitDeterministic, though a restart is left.
TEST_F(LauncherTest, TheSameFailureTwiceStopsWithTheDeterministicCode) {
  int code = run(config(2, "echo $TORCHELASTIC_RESTART_COUNT >> \"$OUT/count.$RANK\"; "
                           "if [ $RANK = 1 ]; then echo 'bad config' >&2; exit 5; fi",
                        /*max_restarts=*/3));
  EXPECT_EQ(code, util::kExitDeterministic);
  EXPECT_EQ(file("count.1"), "0\n1\n");
  EXPECT_TRUE(contains(output_, "not retrying: the same exit code 5 in attempts 0 and 1")) << output_;
}

// The first round fails (rank 0, once rank 1 has written its count), the
// second succeeds: the job succeeds.
TEST_F(LauncherTest, ARestartThatSucceedsEndsTheJobWithZero) {
  fifo("counted");
  int code = run(config(2,
                        "echo $TORCHELASTIC_RESTART_COUNT >> \"$OUT/count.$RANK\"; "
                        "if [ $RANK = 1 ]; then echo > \"$OUT/counted\"; else read x < \"$OUT/counted\"; fi; "
                        "if [ $TORCHELASTIC_RESTART_COUNT = 0 ] && [ $RANK = 0 ]; then exit 5; fi",
                        /*max_restarts=*/3));
  EXPECT_EQ(code, 0);
  EXPECT_EQ(file("count.0"), "0\n1\n");
  EXPECT_EQ(file("count.1"), "0\n1\n");
  EXPECT_TRUE(contains(output_, "exited with code 5; restarting every worker (restart 1 of 3)\n"));
  EXPECT_FALSE(contains(output_, "restart 2 of"));
  EXPECT_FALSE(contains(output_, "job failed"));
}

// A program that does not exist fails the one-node job before anything is
// made: no coordinator, no worker.
TEST_F(LauncherTest, AMissingProgramIsRefusedBeforeTheCoordinatorIsMade) {
  LaunchConfig launch = config(1, "");
  launch.command = {dir_ + "/no-such-program"};
  try {
    run(launch);
    ADD_FAILURE() << "no InputError";
  } catch (const util::InputError& error) {
    EXPECT_TRUE(contains(error.what(), "cannot run '" + dir_ + "/no-such-program': no executable file at that path"));
  }
  EXPECT_EQ(coordinators_made_, 0);
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/logs"));
}

// A Slurm batch job whose batch host is lost: the launcher that took it
// over cancels it --end-job-after after the verdict, with the job id after
// "--". A SLURM_JOB_ID that is no job id ("--user=root" would cancel every
// job of that user) never reaches scancel; the console says so.
TEST_F(LauncherTest, ATakenOverJobIsCancelledOnlyByAJobId) {
  std::filesystem::create_directories(dir_ + "/bin");
  std::ofstream(dir_ + "/bin/scancel") << "#!/bin/sh\necho \"$@\" >> '" << dir_ << "/scancel.args'\n";
  ASSERT_EQ(::chmod((dir_ + "/bin/scancel").c_str(), 0755), 0);
  // scancel runs from this process's PATH: this stub, never a real one.
  struct PathGuard {
    std::string previous = ::getenv("PATH") ? ::getenv("PATH") : "/usr/bin:/bin";
    ~PathGuard() { ::setenv("PATH", previous.c_str(), 1); }
  } guard;
  ::setenv("PATH", (dir_ + "/bin:" + guard.previous).c_str(), 1);
  extra_environment_ = {{"SLURM_JOB_ID", "12"}};
  taken_over_ = true;
  LaunchConfig launch = config(1, "true");
  launch.topology.node_rank = {1, "test"};
  launch.exit_code_file = dir_ + "/exit_code";
  launch.end_job_after = std::chrono::milliseconds(50);
  EXPECT_EQ(run(launch), 0);
  EXPECT_EQ(file("scancel.args"), "-- 12\n") << output_;
  EXPECT_TRUE(contains(output_, "The launcher on " + util::local_host_name() + " cancels the job")) << output_;

  extra_environment_["SLURM_JOB_ID"] = "--user=root";
  std::filesystem::remove(dir_ + "/scancel.args");
  EXPECT_EQ(run(launch), 0);
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/scancel.args")) << file("scancel.args");
  EXPECT_TRUE(contains(output_, "it is not cancelled: the environment's SLURM_JOB_ID holds \"--user=root\", "
                                "which is not a Slurm job id"))
      << output_;
  EXPECT_TRUE(contains(output_, "Cancel the job by hand")) << output_;
}

}  // namespace
}  // namespace dlaunch::launch
