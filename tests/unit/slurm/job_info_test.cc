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

// Every job state Slurm documents (squeue(1), "JOB STATE CODES"; sacct's
// State), with what it means for dlaunch: ended, waiting in the queue, or
// on its way (running, or between running and its end).
enum class Phase { kFinal, kQueued, kOnItsWay };

struct StateCase {
  const char* state;
  Phase phase;
};

constexpr StateCase kSlurmStates[] = {
    {"PENDING", Phase::kQueued},        {"CONFIGURING", Phase::kQueued},  {"REQUEUED", Phase::kQueued},
    {"REQUEUE_HOLD", Phase::kQueued},   {"REQUEUE_FED", Phase::kQueued},  {"SPECIAL_EXIT", Phase::kQueued},
    {"RESV_DEL_HOLD", Phase::kQueued},  {"RUNNING", Phase::kOnItsWay},    {"SUSPENDED", Phase::kOnItsWay},
    {"STOPPED", Phase::kOnItsWay},      {"COMPLETING", Phase::kOnItsWay}, {"RESIZING", Phase::kOnItsWay},
    {"SIGNALING", Phase::kOnItsWay},    {"STAGE_OUT", Phase::kOnItsWay},  {"COMPLETED", Phase::kFinal},
    {"FAILED", Phase::kFinal},          {"CANCELLED", Phase::kFinal},     {"TIMEOUT", Phase::kFinal},
    {"NODE_FAIL", Phase::kFinal},       {"PREEMPTED", Phase::kFinal},     {"OUT_OF_MEMORY", Phase::kFinal},
    {"BOOT_FAIL", Phase::kFinal},       {"DEADLINE", Phase::kFinal},      {"REVOKED", Phase::kFinal},
};

TEST(IsFinalState, EveryStateSlurmDocumentsHasItsPhase) {
  for (const auto& [state, phase] : kSlurmStates) {
    EXPECT_EQ(is_final_state(state), phase == Phase::kFinal) << state;
    EXPECT_EQ(is_queued_state(state), phase == Phase::kQueued) << state;
  }
}

TEST(IsFinalState, SacctsWhoCancelledItDoesNotHideTheEnd) {
  EXPECT_TRUE(is_final_state("CANCELLED by 1000"));
  EXPECT_TRUE(is_queued_state("PENDING by 0"));
}

// A state no Slurm showed before is taken for a job on its way, never for
// its end (job_info.h says why), by every command alike.
TEST(IsFinalState, AnUnknownStateIsNotAnEnd) {
  for (const char* state : {"", "UNKNOWN", "LAUNCH_FAILED_SOMEDAY", "completed", "COMPLETED_", "FAIL"}) {
    EXPECT_FALSE(is_final_state(state)) << state;
    EXPECT_FALSE(is_queued_state(state)) << state;
  }
}

TEST(EndExitCode, IsNeverSuccessUnlessTheJobCompleted) {
  auto code_of = [](const char* line) { return end_exit_code(parse_job_records(line).at(0)); };
  EXPECT_EQ(code_of("JobId=1 JobState=COMPLETED ExitCode=0:0"), 0);
  EXPECT_EQ(code_of("JobId=2 JobState=FAILED ExitCode=3:0"), 3);
  EXPECT_EQ(code_of("JobId=3 JobState=CANCELLED ExitCode=0:15"), 128 + 15);
  EXPECT_EQ(code_of("JobId=4 JobState=TIMEOUT ExitCode=0:0"), 1);
  EXPECT_EQ(code_of("JobId=5 JobState=CANCELLED by 1000 ExitCode=0:0"), 1);
  EXPECT_EQ(code_of("JobId=6 JobState=FAILED ExitCode=junk"), 1);
  EXPECT_EQ(code_of("JobId=7 JobState=COMPLETED"), 1);
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
