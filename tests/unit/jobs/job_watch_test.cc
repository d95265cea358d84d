#include "jobs/job_watch.h"

#include <gtest/gtest.h>

#include "util/error.h"

namespace dlaunch::jobs {
namespace {

// The one record of scontrol's LINE.
slurm::JobInfo record_of(const char* line) { return slurm::parse_job_records(line).at(0); }

TEST(JobWatch, ReadsStateAndExitCodeFromScontrol) {
  auto completed =
      parse_job_end(record_of("JobId=12 JobName=x UserId=root(0) JobState=COMPLETED Reason=None ExitCode=0:0 "
                              "RunTime=00:00:09"));
  EXPECT_EQ(completed.state, "COMPLETED");
  EXPECT_EQ(completed.exit_code, 0);
  auto failed = parse_job_end(record_of("JobId=13 JobState=FAILED Reason=NonZeroExitCode ExitCode=3:0"));
  EXPECT_EQ(failed.state, "FAILED");
  EXPECT_EQ(failed.exit_code, 3);
  auto killed = parse_job_end(record_of("JobId=14 JobState=CANCELLED Reason=None ExitCode=0:15"));
  EXPECT_EQ(killed.exit_code, 128 + 15);
  auto timeout = parse_job_end(record_of("JobId=15 JobState=TIMEOUT ExitCode=0:0"));
  EXPECT_NE(timeout.exit_code, 0);  // not COMPLETED is never success
  auto by_whom = parse_job_end(record_of("JobId=16 JobState=CANCELLED by 1000 ExitCode=0:0"));
  EXPECT_EQ(by_whom.state, "CANCELLED");
  EXPECT_THROW(parse_job_end(record_of("JobId=17 Reason=None")), util::SystemError);
}

TEST(JobWatch, APendingLineSaysHowLongAndWhyOnlyWhenSlurmKnows) {
  EXPECT_EQ(pending_line("12", "PENDING", "Priority", 14), "job 12: PENDING (Priority), 14 s since it was submitted");
  EXPECT_EQ(pending_line("12", "PENDING", "None", 0), "job 12: PENDING, 0 s since it was submitted");
  EXPECT_EQ(pending_line("7", "REQUEUED", "", 3), "job 7: REQUEUED, 3 s since it was submitted");
}

// --- judged_end: Slurm's end or dlaunch's verdict ---

RunVerdict verdict_of(const std::string& state, int exit_code, const std::string& written_by,
                      const std::string& slurm_end = "") {
  RunVerdict verdict;
  verdict.state = state;
  verdict.exit_code = exit_code;
  verdict.written_by = written_by;
  verdict.slurm_end = slurm_end;
  return verdict;
}

TEST(JudgedEnd, WithoutAVerdictSlurmsEndIsReportedAsItIs) {
  auto end = judged_end(JobEnd{"TIMEOUT", 128 + 15, ""}, std::nullopt, "unused");
  ASSERT_TRUE(end);
  EXPECT_EQ(end->state, "TIMEOUT");
  EXPECT_EQ(end->exit_code, 128 + 15);
  EXPECT_EQ(end->note, "");
  EXPECT_EQ(judged_end(std::nullopt, std::nullopt, "Slurm no longer knows the job"), std::nullopt)
      << "nothing is known";
}

// Slurm shows COMPLETING for long (a node froze), or purged the job: the
// verdict is the end, and the note says why and whose verdict it is.
TEST(JudgedEnd, WithoutSlurmsEndTheVerdictIsReportedWithWhyAndWhoseItIs) {
  auto end = judged_end(std::nullopt, verdict_of("FAILED", 3, "h2"), "Slurm no longer knows the job");
  ASSERT_TRUE(end);
  EXPECT_EQ(end->state, "FAILED");
  EXPECT_EQ(end->exit_code, 3);
  EXPECT_EQ(end->note,
            "Slurm no longer knows the job; the job's verdict, from its launcher on h2, is FAILED with exit code 3");
  // A verdict that does not say who wrote it is node 0's.
  end = judged_end(std::nullopt, verdict_of("COMPLETED", 0, ""), "why");
  ASSERT_TRUE(end);
  EXPECT_NE(end->note.find("from its launcher on node 0, is COMPLETED with exit code 0"), std::string::npos)
      << end->note;
}

// dlaunch cancelled the job itself (its batch host was lost): Slurm's
// CANCELLED is how the allocation ended, the verdict how the job did.
TEST(JudgedEnd, WhenDlaunchEndedTheSlurmJobTheVerdictStandsAndSlurmsStateIsNoted) {
  auto end = judged_end(JobEnd{"CANCELLED", 128 + 15, ""},
                        verdict_of("COMPLETED", 0, "h2", "cancelled by dlaunch: the batch host h0 was lost"), "");
  ASSERT_TRUE(end);
  EXPECT_EQ(end->state, "COMPLETED");
  EXPECT_EQ(end->exit_code, 0);
  EXPECT_EQ(end->note, "Slurm records CANCELLED: cancelled by dlaunch: the batch host h0 was lost");
}

TEST(JudgedEnd, WhenSlurmEndedTheJobItselfSlurmsEndStands) {
  // A verdict written before Slurm's time limit ended the job anyway.
  auto end = judged_end(JobEnd{"TIMEOUT", 128 + 15, ""}, verdict_of("COMPLETED", 0, "h0"), "");
  ASSERT_TRUE(end);
  EXPECT_EQ(end->state, "TIMEOUT");
  EXPECT_EQ(end->exit_code, 128 + 15);
  EXPECT_EQ(end->note, "");
}

}  // namespace
}  // namespace dlaunch::jobs
