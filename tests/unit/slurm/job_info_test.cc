#include "slurm/job_info.h"

#include <gtest/gtest.h>

namespace dlaunch::slurm {
namespace {

constexpr const char* kRunning =
    "JobId=12 JobName=train.py UserId=me(1000) JobState=RUNNING Reason=None Restarts=1 "
    "ExitCode=0:0 RunTime=00:01:05 TimeLimit=1-00:00:00 SubmitTime=2026-12-03T20:00:00 "
    "NodeList=node[1-3] NumNodes=3 Command=/home/me/my jobs/job.sbatch WorkDir=/home/me "
    "StdOut=/home/me/out/slurm-12.log Power=\n";

TEST(ParseJobRecords, ReadsEveryFieldOfAOneLineRecord) {
  auto records = parse_job_records(kRunning);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].job_id(), "12");
  EXPECT_EQ(records[0].state(), "RUNNING");
  EXPECT_EQ(records[0].field("NodeList"), "node[1-3]");
  EXPECT_EQ(records[0].field("StdOut"), "/home/me/out/slurm-12.log");
  EXPECT_TRUE(records[0].has("Power"));
  EXPECT_EQ(records[0].field("Power"), "");
  EXPECT_FALSE(records[0].has("Missing"));
}

TEST(ParseJobRecords, AWordWithoutEqualsContinuesTheValueBeforeIt) {
  auto records = parse_job_records(kRunning);
  EXPECT_EQ(records[0].field("Command"), "/home/me/my jobs/job.sbatch");
}

TEST(ParseJobRecords, OneRecordPerArrayTaskAndPendingRuns) {
  auto records = parse_job_records(
      "JobId=20 ArrayJobId=20 ArrayTaskId=2-3%2 JobState=PENDING Reason=JobArrayTaskLimit\n"
      "\n"
      "JobId=21 ArrayJobId=20 ArrayTaskId=0 JobState=RUNNING Reason=None\n"
      "JobId=22 ArrayJobId=20 ArrayTaskId=1 JobState=COMPLETED ExitCode=0:0\n");
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0].display_id(), "20_[2-3%2]");
  EXPECT_EQ(records[1].display_id(), "20_0");
  EXPECT_EQ(records[2].display_id(), "20_1");
  EXPECT_EQ(parse_job_records(kRunning)[0].display_id(), "12");
}

TEST(ParseJobRecords, GarbageGivesNoFieldsAndNoCrash) {
  EXPECT_TRUE(parse_job_records("").empty());
  EXPECT_TRUE(parse_job_records("slurm_load_jobs error: Invalid job id specified\n").empty());
  EXPECT_TRUE(parse_job_records("=== ==x 9=1\n").empty());
}

TEST(ParseJobRecords, AnOverlongLineIsCut) {
  std::string line = "JobId=1 Comment=" + std::string(kMaxRecordBytes * 2, 'x') + " JobState=RUNNING\n";
  auto records = parse_job_records(line);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_LE(records[0].field("Comment").size(), kMaxRecordBytes);
  EXPECT_FALSE(records[0].has("JobState"));
}

TEST(ParseDuration, ReadsSlurmsForms) {
  EXPECT_EQ(parse_duration("00:01:05"), 65);
  EXPECT_EQ(parse_duration("01:05"), 65);
  EXPECT_EQ(parse_duration("1-00:00:00"), 86400);
  EXPECT_EQ(parse_duration("2-03:04:05"), 2 * 86400 + 3 * 3600 + 4 * 60 + 5);
  EXPECT_EQ(parse_duration("UNLIMITED"), std::nullopt);
  EXPECT_EQ(parse_duration("Partition_Limit"), std::nullopt);
  EXPECT_EQ(parse_duration("-1:00"), std::nullopt);
  EXPECT_EQ(parse_duration("1:2:3:4"), std::nullopt);
}

TEST(FormatDuration, IsParseDurationsInverse) {
  for (long long seconds : {0LL, 59LL, 65LL, 3600LL, 86399LL, 86400LL, 200000LL})
    EXPECT_EQ(parse_duration(format_duration(seconds)), seconds) << seconds;
  EXPECT_EQ(format_duration(65), "01:05");
  EXPECT_EQ(format_duration(90061), "1-01:01:01");
}

TEST(IsFinalState, KnowsTheEndsAndTheRest) {
  for (const char* state : {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY"})
    EXPECT_TRUE(is_final_state(state)) << state;
  for (const char* state : {"PENDING", "RUNNING", "COMPLETING", "REQUEUED", "SUSPENDED", ""})
    EXPECT_FALSE(is_final_state(state)) << state;
}

TEST(ParseExitCode, SignalsBecome128PlusN) {
  EXPECT_EQ(parse_exit_code("0:0"), 0);
  EXPECT_EQ(parse_exit_code("3:0"), 3);
  EXPECT_EQ(parse_exit_code("0:9"), 137);
  EXPECT_EQ(parse_exit_code("x"), std::nullopt);
  EXPECT_EQ(parse_exit_code("300:0"), std::nullopt);
}

}  // namespace
}  // namespace dlaunch::slurm
