#include "submit/job_watch.h"

#include <gtest/gtest.h>

#include "util/error.h"

namespace dlaunch::submit {
namespace {

TEST(JobWatch, ReadsStateAndExitCodeFromScontrol) {
  auto completed = parse_job_end("JobId=12 JobName=x UserId=root(0) JobState=COMPLETED Reason=None ExitCode=0:0 RunTime=00:00:09");
  EXPECT_EQ(completed.state, "COMPLETED");
  EXPECT_EQ(completed.exit_code, 0);
  auto failed = parse_job_end("JobId=13 JobState=FAILED Reason=NonZeroExitCode ExitCode=3:0");
  EXPECT_EQ(failed.state, "FAILED");
  EXPECT_EQ(failed.exit_code, 3);
  auto killed = parse_job_end("JobId=14 JobState=CANCELLED Reason=None ExitCode=0:15");
  EXPECT_EQ(killed.exit_code, 128 + 15);
  auto timeout = parse_job_end("JobId=15 JobState=TIMEOUT ExitCode=0:0");
  EXPECT_NE(timeout.exit_code, 0);  // not COMPLETED is never success
  EXPECT_THROW(parse_job_end("slurm_load_jobs error: Invalid job id specified"), util::SystemError);
}

TEST(JobWatch, APendingLineSaysHowLongAndWhyOnlyWhenSlurmKnows) {
  EXPECT_EQ(pending_line("12", "PENDING", "Priority", 14), "job 12: PENDING (Priority), 14 s since it was submitted");
  EXPECT_EQ(pending_line("12", "PENDING", "None", 0), "job 12: PENDING, 0 s since it was submitted");
  EXPECT_EQ(pending_line("7", "REQUEUED", "", 3), "job 7: REQUEUED, 3 s since it was submitted");
}

}  // namespace
}  // namespace dlaunch::submit
