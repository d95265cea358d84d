// Cancelling a job: the scancel command lines dlaunch runs, with fake
// scontrol and scancel first in PATH that record their arguments. The id
// goes after "--", and one that is no job id reaches no Slurm command
// (issue 24: a job_id file reading "--user=root" reached scancel as an
// option, which would cancel every job of that user). Then each step of a
// cancel: a job already over is left alone, a signal first and scancel
// only for a job that outlives its grace, one task of an array alone, a
// job still there after the timeout is an error, and one Slurm forgot at
// once is recorded as cancelled.
#include "jobs/job_cancel.h"

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>

#include "../test_support/temp_dir.h"
#include "jobs/submission_record.h"
#include "util/error.h"

namespace dlaunch::jobs {
namespace {

namespace fs = std::filesystem;

class JobCancel : public ::testing::Test {
 protected:
  void SetUp() override {
    previous_path_ = std::getenv("PATH");
    ::setenv("PATH", (dir_.path() + ":" + previous_path_).c_str(), 1);
    // RUNNING until scancel has run; then Slurm shows it CANCELLED.
    fake("scontrol", "if [ -e '" + dir_.path() + "/cancelled' ]; then s=CANCELLED; else s=RUNNING; fi\n"
                     "echo \"JobId=12 JobState=$s ExitCode=0:15\"");
    fake("scancel", "touch '" + dir_.path() + "/cancelled'");
    fake("sacct", "exit 1");  // no accounting here
  }
  void TearDown() override { ::setenv("PATH", previous_path_.c_str(), 1); }

  // NAME: appends its arguments (one a line) to DIR/calls, then runs BODY.
  void fake(const std::string& name, const std::string& body) {
    const std::string script = dir_.path() + "/" + name;
    std::ofstream(script) << "#!/bin/sh\n{ echo " << name << "; printf '%s\\n' \"$@\"; } >> '" << dir_.path()
                          << "/calls'\n" << body << "\n";
    fs::permissions(script, fs::perms::owner_all);
  }
  std::string calls() const {
    std::ifstream file(dir_.path() + "/calls");
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
  }
  SubmissionRecord record(const std::string& job_id) const {
    SubmissionRecord made;
    made.folder = dir_.path();
    made.job_id = job_id;
    return made;
  }

  test_support::TempDir dir_;
  std::string previous_path_;
};

TEST_F(JobCancel, TheIdGoesAfterTheEndOfOptions) {
  CancelRequest request;
  request.timeout = std::chrono::seconds(10);
  CancelOutcome outcome = cancel_job(record("12"), request);
  EXPECT_TRUE(outcome.cancelled);
  EXPECT_EQ(outcome.final_status.state, "CANCELLED");
  EXPECT_NE(calls().find("scancel\n--\n12\n"), std::string::npos) << calls();
  EXPECT_NE(calls().find("scontrol\nshow\njob\n-o\n--\n12\n"), std::string::npos) << calls();
}

TEST_F(JobCancel, AnIdThatIsAnOptionReachesNoSlurmCommand) {
  for (const char* id : {"--user=root", "-u", "12 --user=root", "12_--all"}) {
    EXPECT_THROW(cancel_job(record(id), CancelRequest{}), util::InputError) << id;
  }
  EXPECT_EQ(calls(), "");
}

TEST_F(JobCancel, AJobThatHasEndedIsLeftAlone) {
  fake("scontrol", "echo 'JobId=12 JobState=COMPLETED ExitCode=0:0'");
  CancelOutcome outcome = cancel_job(record("12"), CancelRequest{});
  EXPECT_TRUE(outcome.already_ended);
  EXPECT_FALSE(outcome.cancelled);
  EXPECT_EQ(calls().find("scancel"), std::string::npos) << calls();
}

TEST_F(JobCancel, AJobThatEndsWithinTheGraceAfterTheSignalIsNotCancelled) {
  CancelRequest request;
  request.signal = SIGUSR1;
  CancelOutcome outcome = cancel_job(record("12"), request);
  EXPECT_TRUE(outcome.signalled);
  EXPECT_TRUE(outcome.ended_after_signal);
  EXPECT_FALSE(outcome.cancelled);
  EXPECT_NE(calls().find("scancel\n--signal=USR1\n--\n12\n"), std::string::npos) << calls();
  EXPECT_EQ(calls().find("scancel\n--\n"), std::string::npos) << calls();
}

TEST_F(JobCancel, AJobThatOutlivesTheGraceIsCancelled) {
  // The signal changes nothing; scancel without it ends the job.
  fake("scancel", "case \"$1\" in --signal=*) ;; *) touch '" + dir_.path() + "/cancelled' ;; esac");
  CancelRequest request;
  request.signal = SIGUSR1;
  request.grace = std::chrono::seconds(0);
  CancelOutcome outcome = cancel_job(record("12"), request);
  EXPECT_TRUE(outcome.signalled);
  EXPECT_FALSE(outcome.ended_after_signal);
  EXPECT_TRUE(outcome.cancelled);
  EXPECT_EQ(outcome.final_status.state, "CANCELLED");
}

TEST_F(JobCancel, AJobStillThereAfterTheTimeoutIsAnErrorThatSaysSo) {
  fake("scancel", "exit 0");
  CancelRequest request;
  request.timeout = std::chrono::seconds(0);
  try {
    cancel_job(record("12"), request);
    FAIL() << "a job still running was reported cancelled";
  } catch (const util::SystemError& error) {
    EXPECT_NE(std::string(error.what()).find("job 12 is still RUNNING"), std::string::npos) << error.what();
  }
}

TEST_F(JobCancel, AScancelThatFailsIsAnErrorWithItsWords) {
  fake("scancel", "echo 'scancel: error: Kill job error on job id 12: Access/permission denied' >&2; exit 1");
  try {
    cancel_job(record("12"), CancelRequest{});
    FAIL() << "a refused scancel went unnoticed";
  } catch (const util::SystemError& error) {
    EXPECT_NE(std::string(error.what()).find("Access/permission denied"), std::string::npos) << error.what();
  }
}

TEST_F(JobCancel, OneTaskOfAnArrayIsCancelledAlone) {
  fake("scontrol", "if [ -e '" + dir_.path() + "/cancelled' ]; then s=CANCELLED; else s=RUNNING; fi\n"
                   "echo \"JobId=15 ArrayJobId=12 ArrayTaskId=3 JobState=$s ExitCode=0:15\"\n"
                   "echo 'JobId=16 ArrayJobId=12 ArrayTaskId=4 JobState=RUNNING ExitCode=0:0'");
  SubmissionRecord array = record("12");
  array.tasks = {TaskRecord{3, dir_.path() + "/task_3", {}}, TaskRecord{4, dir_.path() + "/task_4", {}}};
  CancelRequest request;
  request.task = 3;
  CancelOutcome outcome = cancel_job(array, request);
  EXPECT_TRUE(outcome.cancelled);
  EXPECT_EQ(outcome.final_status.state, "CANCELLED");
  EXPECT_NE(calls().find("scancel\n--\n12_3\n"), std::string::npos) << calls();
}

TEST_F(JobCancel, AJobSlurmForgetsAtOnceIsRecordedAsCancelled) {
  fake("scontrol", "if [ -e '" + dir_.path() + "/cancelled' ]; then\n"
                   "  echo 'slurm_load_jobs error: Invalid job id specified' >&2; exit 1\n"
                   "fi\necho 'JobId=12 JobState=RUNNING ExitCode=0:0'");
  CancelOutcome outcome = cancel_job(record("12"), CancelRequest{});
  EXPECT_EQ(outcome.final_status.state, "CANCELLED");
  auto recorded = recorded_end(dir_.path());
  ASSERT_TRUE(recorded.has_value());
  EXPECT_EQ(recorded->state, "CANCELLED");
}

TEST_F(JobCancel, ARunWithoutASlurmJobCannotBeCancelled) {
  EXPECT_THROW(cancel_job(record(""), CancelRequest{}), util::InputError);
  EXPECT_EQ(calls(), "");
}

}  // namespace
}  // namespace dlaunch::jobs
