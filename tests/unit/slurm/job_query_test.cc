// Asking scontrol about a job, with a fake scontrol first in PATH: the
// command line, the records, a job Slurm does not know, and scontrol's
// failures (its own words, a missing scontrol, one that never answers),
// each named with the job.
#include "slurm/job_query.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>

#include "../test_support/temp_dir.h"
#include "util/error.h"

namespace dlaunch::slurm {
namespace {

namespace fs = std::filesystem;

class JobQuery : public ::testing::Test {
 protected:
  void SetUp() override {
    previous_path_ = std::getenv("PATH");
    ::setenv("PATH", (dir_.path() + ":" + previous_path_).c_str(), 1);
  }
  void TearDown() override { ::setenv("PATH", previous_path_.c_str(), 1); }

  // A scontrol that writes its arguments, one a line, to DIR/args, then runs BODY.
  void fake_scontrol(const std::string& body) {
    const std::string script = dir_.path() + "/scontrol";
    std::ofstream(script) << "#!/bin/sh\nprintf '%s\\n' \"$@\" > '" << dir_.path() << "/args'\n" << body << "\n";
    fs::permissions(script, fs::perms::owner_all);
  }
  std::string arguments() const {
    std::ifstream file(dir_.path() + "/args");
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
  }
  // What show_job(JOB_ID) throws, or "" when it does not.
  static std::string failure_of(const std::string& job_id, std::chrono::seconds patience = kScontrolPatience) {
    try {
      show_job(job_id, patience);
    } catch (const util::SystemError& error) {
      return error.what();
    }
    return "";
  }

  test_support::TempDir dir_;
  std::string previous_path_;
};

TEST_F(JobQuery, RunsScontrolShowJobWithTheIdAfterTheOptions) {
  fake_scontrol("echo 'JobId=12 JobState=RUNNING Reason=None ExitCode=0:0'");
  auto records = show_job("12");
  EXPECT_EQ(arguments(), "show\njob\n-o\n--\n12\n");
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].state(), "RUNNING");
}

TEST_F(JobQuery, AnArrayGivesARecordPerTask) {
  fake_scontrol("echo 'JobId=13 ArrayJobId=12 ArrayTaskId=1 JobState=RUNNING'\n"
                "echo 'JobId=12 ArrayJobId=12 ArrayTaskId=2-3 JobState=PENDING'");
  auto records = show_job("12");
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[1].display_id(), "12_[2-3]");
}

TEST_F(JobQuery, AJobSlurmDoesNotKnowGivesNoRecords) {
  fake_scontrol("echo 'slurm_load_jobs error: Invalid job id specified' >&2\nexit 1");
  EXPECT_TRUE(show_job("12").empty());
}

TEST_F(JobQuery, AFailureNamesTheJobAndScontrolsWords) {
  fake_scontrol("echo 'slurm_load_jobs error: Unable to contact slurm controller (connect failure)' >&2\nexit 1");
  std::string said = failure_of("4711");
  EXPECT_NE(said.find("job 4711"), std::string::npos) << said;
  EXPECT_NE(said.find("Unable to contact slurm controller (connect failure)"), std::string::npos) << said;
}

TEST_F(JobQuery, AScontrolThatNeverAnswersIsGivenUpOn) {
  fake_scontrol("exec sleep 30");
  const auto started = std::chrono::steady_clock::now();
  std::string said = failure_of("12", std::chrono::seconds(1));
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10));
  EXPECT_NE(said.find("job 12"), std::string::npos) << said;
  EXPECT_NE(said.find("did not answer within 1 s"), std::string::npos) << said;
}

TEST_F(JobQuery, AMissingScontrolIsNamed) {
  // PATH with timeout alone: no scontrol anywhere.
  const std::string tools = dir_.path() + "/tools";
  fs::create_directories(tools);
  fs::create_symlink("/usr/bin/timeout", tools + "/timeout");
  ::setenv("PATH", tools.c_str(), 1);
  std::string said = failure_of("12");
  EXPECT_NE(said.find("job 12"), std::string::npos) << said;
  EXPECT_NE(said.find("'scontrol': not found in PATH"), std::string::npos) << said;
}

TEST_F(JobQuery, AnIdThatIsAnOptionReachesNoScontrol) {
  fake_scontrol("exit 0");
  EXPECT_THROW(show_job("--user=root"), util::InputError);
  EXPECT_EQ(arguments(), "");
}

}  // namespace
}  // namespace dlaunch::slurm
