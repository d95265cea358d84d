// Putting a preempted job back in the queue: the scontrol command line, and
// scontrol's own words when it refuses. A fake scontrol, first in PATH,
// records its arguments.
#include "slurm/requeue.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "util/error.h"

namespace dlaunch::slurm {
namespace {

namespace fs = std::filesystem;

class Requeue : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    previous_path_ = std::getenv("PATH");
    ::setenv("PATH", (dir_.string() + ":" + previous_path_).c_str(), 1);
  }
  void TearDown() override {
    ::setenv("PATH", previous_path_.c_str(), 1);
    fs::remove_all(dir_);
  }
  // A scontrol that records its arguments, one a line, then runs BODY.
  void fake_scontrol(const std::string& body) {
    fs::path script = dir_ / "scontrol";
    std::ofstream(script) << "#!/bin/sh\nprintf '%s\\n' \"$@\" > '" << (dir_ / "args").string()
                          << "'\n" << body << "\n";
    fs::permissions(script, fs::perms::owner_all);
  }
  std::string arguments() const {
    std::ifstream file(dir_ / "args");
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
  }

  fs::path dir_ = fs::path(::testing::TempDir()) / ("dlaunch_requeue_" + std::to_string(::getpid()));
  std::string previous_path_;
};

TEST_F(Requeue, RunsScontrolRequeueWithTheJobId) {
  fake_scontrol("exit 0");
  requeue_job("4711");
  EXPECT_EQ(arguments(), "requeue\n--\n4711\n");
}

TEST_F(Requeue, ARefusalCarriesScontrolsMessageAndWhatToCheck) {
  fake_scontrol("echo 'scontrol: error: Requested operation is presently disabled for job 4711' >&2\nexit 1");
  try {
    requeue_job("4711");
    FAIL() << "a failed requeue was not reported";
  } catch (const util::SystemError& error) {
    EXPECT_EQ(std::string(error.what()),
              "scontrol requeue 4711 failed (exit 1): scontrol: error: Requested operation is "
              "presently disabled for job 4711. The job must be a batch job submitted with "
              "--requeue on a cluster that allows requeueing (JobRequeue in slurm.conf)");
  }
}

TEST_F(Requeue, WithNothingOnStderrTheMessageComesFromStdout) {
  fake_scontrol("echo 'Invalid job id specified'\nexit 3");
  try {
    requeue_job("12");
    FAIL() << "a failed requeue was not reported";
  } catch (const util::SystemError& error) {
    EXPECT_NE(std::string(error.what()).find("scontrol requeue 12 failed (exit 3): Invalid job id specified."),
              std::string::npos)
        << error.what();
  }
}

TEST_F(Requeue, WithoutScontrolTheMessageSaysSo) {
  ::setenv("PATH", dir_.c_str(), 1);  // an empty folder: no scontrol anywhere
  try {
    requeue_job("12");
    FAIL() << "a missing scontrol was not reported";
  } catch (const util::SystemError& error) {
    EXPECT_NE(std::string(error.what()).find("cannot run 'scontrol': not found in PATH"),
              std::string::npos)
        << error.what();
  }
}

TEST_F(Requeue, AnIdThatIsAnOptionNeverReachesScontrol) {
  fake_scontrol("exit 0");
  EXPECT_THROW(requeue_job("--all"), util::InputError);
  EXPECT_FALSE(fs::exists(dir_ / "args")) << "scontrol ran with: " << arguments();
}

}  // namespace
}  // namespace dlaunch::slurm
