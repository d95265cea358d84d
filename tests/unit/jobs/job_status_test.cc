#include "jobs/job_status.h"

#include <filesystem>
#include <fstream>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "../test_support/files.h"
#include "../test_support/temp_dir.h"

namespace dlaunch::jobs {
namespace {

using test_support::write_file;

SubmissionRecord submission(const std::string& folder, const std::string& job_id) {
  write_file(folder + "/config.json",
        R"({"settings": {"nodes": {"value": "3", "source": "--nodes"}}, "command": ["train.py"],
            "timestamp": "20261203_140509", "job_name": "train.py"})");
  write_file(folder + "/job_id", job_id + "\n");
  return read_submission(folder);
}

TEST(JobStatus, LiveFromSlurmWhileSlurmKnowsTheJob) {
  test_support::TempDir dir;
  auto record = submission(dir.path() + "/s", "12");
  auto records = slurm::parse_job_records(
      "JobId=12 JobState=PENDING Reason=Priority Restarts=1 RunTime=00:00:00 TimeLimit=01:00:00 NodeList=(null)\n");
  JobStatus status = job_status(record, records, {});
  EXPECT_EQ(status.state, "PENDING");
  EXPECT_EQ(status.reason, "Priority");
  EXPECT_EQ(status.requeues, 1);
  EXPECT_EQ(status.node_list, "");
  EXPECT_EQ(status.exit_code, std::nullopt);
  EXPECT_EQ(state_text(status), "PENDING (Priority)");
  EXPECT_EQ(record.nodes, 3);
  EXPECT_EQ(record.name, "train.py");
  EXPECT_EQ(record.submitted, "2026-12-03T14:05:09");
}

TEST(JobStatus, ReasonNoneIsNoReason) {
  test_support::TempDir dir;
  auto record = submission(dir.path() + "/s", "12");
  JobStatus status = job_status(record, slurm::parse_job_records("JobId=12 JobState=RUNNING Reason=None\n"), {});
  EXPECT_EQ(state_text(status), "RUNNING");
}

TEST(JobStatus, RecordedStateOnceSlurmForgotTheJob) {
  test_support::TempDir dir;
  auto record = submission(dir.path() + "/s", "12");
  ASSERT_EQ(save_recorded_end(record.folder, {"FAILED", 3, "Slurm, seen at 2026-12-03T14:10:00", "00:01:05", "node[1-3]"}), "");
  JobStatus status = job_status(record, {}, {});
  EXPECT_EQ(status.state, "FAILED");
  EXPECT_EQ(status.exit_code, 3);
  EXPECT_EQ(status.elapsed, "00:01:05");
  EXPECT_EQ(status.node_list, "node[1-3]");
  EXPECT_THAT(status.source, ::testing::HasSubstr("Slurm no longer knows job 12"));
  EXPECT_EQ(state_text(status), "FAILED (exit 3)");
}

TEST(JobStatus, DlaunchRunsResultWhenNothingElseWasRecorded) {
  test_support::TempDir dir;
  auto record = submission(dir.path() + "/s", "12");
  write_file(record.folder + "/logs/attempt_0/rank0/stdout.log", "");
  write_file(record.folder + "/logs/attempt_1/rank0/stdout.log", "");
  write_file(record.folder + "/logs/result.json",
        R"({"state": "FAILED", "exit_code": 4, "restarts": 1, "failure": "rank 0 exited with code 4",
            "failure_summary": "the block", "ended": "2026-12-03T14:10:00"})");
  JobStatus status = job_status(record, {}, {});
  EXPECT_EQ(status.state, "FAILED");
  EXPECT_EQ(status.exit_code, 4);
  EXPECT_EQ(status.restarts, 1);
  EXPECT_EQ(status.failure_summary, "the block");
}

TEST(JobStatus, AfterARequeueTheCurrentRunCountsNotTheOneBefore) {
  test_support::TempDir dir;
  auto record = submission(dir.path() + "/s", "12");
  write_file(record.folder + "/logs/attempt_2/rank0/stdout.log", "");
  write_file(record.folder + "/logs/result.json", R"({"state": "FAILED", "exit_code": 4, "restarts": 2, "failure": "old"})");
  write_file(record.folder + "/logs/requeue_1/attempt_0/rank0/stdout.log", "");
  JobStatus status = job_status(record, slurm::parse_job_records("JobId=12 JobState=RUNNING Restarts=1\n"), {});
  EXPECT_EQ(status.restarts, 0);
  EXPECT_EQ(status.failure, "");
  EXPECT_EQ(status.requeues, 1);
}

TEST(JobStatus, UnknownWhenForgottenAndNothingRecorded) {
  test_support::TempDir dir;
  auto record = submission(dir.path() + "/s", "12");
  JobStatus status = job_status(record, {}, {});
  EXPECT_EQ(status.state, "UNKNOWN");
  EXPECT_THAT(status.source, ::testing::HasSubstr("nothing was recorded"));
}

TEST(JobStatus, SacctBeforeTheFolderRecords) {
  test_support::TempDir dir;
  auto record = submission(dir.path() + "/s", "12");
  JobStatus status = job_status(record, {}, parse_sacct("12|TIMEOUT|0:15|01:00:00|node[1-2]\n"));
  EXPECT_EQ(status.state, "TIMEOUT");
  EXPECT_EQ(status.exit_code, 128 + 15);
  EXPECT_EQ(status.source, "sacct");
}

TEST(JobStatus, AnArraysTasksAndTheirSummary) {
  test_support::TempDir dir;
  auto record = submission(dir.path() + "/s", "20");
  write_file(record.folder + "/sweep.json",
        R"({"tasks": [{"index": 0, "values": {"lr": "0.1"}, "folder": "task_0"},
                      {"index": 1, "values": {"lr": "0.01"}, "folder": "task_1"},
                      {"index": 2, "values": {"lr": "0.001"}, "folder": "task_2"},
                      {"index": 3, "values": {"lr": "1"}, "folder": "../evil"}]})");
  record = read_submission(record.folder);
  ASSERT_EQ(record.tasks.size(), 3u);  // a folder outside the submission is not followed
  auto records = slurm::parse_job_records(
      "JobId=21 ArrayJobId=20 ArrayTaskId=0 JobState=COMPLETED ExitCode=0:0\n"
      "JobId=20 ArrayJobId=20 ArrayTaskId=1-2%1 JobState=PENDING Reason=JobArrayTaskLimit\n");
  JobStatus status = job_status(record, records, {});
  ASSERT_EQ(status.tasks.size(), 3u);
  EXPECT_EQ(status.tasks[0].state, "COMPLETED");
  EXPECT_EQ(status.tasks[2].state, "PENDING");
  EXPECT_EQ(status.tasks[2].reason, "JobArrayTaskLimit");
  EXPECT_EQ(status.tasks[1].values.at("lr"), "0.01");
  EXPECT_EQ(status.state, "PENDING");
  EXPECT_EQ(state_text(status), "1 COMPLETED, 2 PENDING");

  records = slurm::parse_job_records(
      "JobId=21 ArrayJobId=20 ArrayTaskId=0 JobState=COMPLETED ExitCode=0:0\n"
      "JobId=22 ArrayJobId=20 ArrayTaskId=1 JobState=FAILED ExitCode=3:0\n"
      "JobId=23 ArrayJobId=20 ArrayTaskId=2 JobState=COMPLETED ExitCode=0:0\n");
  status = job_status(record, records, {});
  EXPECT_EQ(status.state, "FAILED");
  EXPECT_EQ(status.exit_code, 3);
}

TEST(HasEnded, AFinalStateOrAJobSlurmSaysItForgot) {
  JobStatus status;
  status.state = "RUNNING";
  EXPECT_FALSE(has_ended(status));
  status.state = "TIMEOUT";
  EXPECT_TRUE(has_ended(status));
  status.state = "UNKNOWN";
  EXPECT_TRUE(has_ended(status));
  status.slurm_answered = false;  // a controller that is down says nothing of the job
  EXPECT_FALSE(has_ended(status));
  status.state = "RUNNING";
  status.tasks.push_back(ArrayTask{});
  status.tasks.back().index = 2;
  status.tasks.back().state = "COMPLETED";
  EXPECT_TRUE(has_ended(status, 2));
  EXPECT_FALSE(has_ended(status));
}

TEST(ParseSacct, ReadsItsParsableLines) {
  auto tasks = parse_sacct("20_0|COMPLETED|0:0|00:00:05|node1\n20_1|CANCELLED by 0|0:0|00:00:02|node2\nbad\n");
  ASSERT_EQ(tasks.size(), 2u);
  EXPECT_EQ(tasks[1].id, "20_1");
  EXPECT_EQ(tasks[1].state, "CANCELLED");
}

// --- dlaunch run's verdict (result.json), read back ---

constexpr const char* kVerdictResult =
    R"({"state": "COMPLETED", "exit_code": 0, "written_by": "h2", "restarts": 1,
        "slurm_end": "cancelled by dlaunch: the batch host h0 was lost",
        "timeline": ["10:00:05 node 0 (h0) lost: no heartbeat for 30 s", "10:00:40 h2 took its place", 7]})";

TEST(RunVerdict, ReadsTheVerdictItsWriterHowSlurmWasEndedAndTheTimeline) {
  test_support::TempDir dir;
  write_file(dir.path() + "/logs/result.json", kVerdictResult);
  auto verdict = run_verdict(dir.path());
  ASSERT_TRUE(verdict);
  EXPECT_EQ(verdict->state, "COMPLETED");
  EXPECT_EQ(verdict->exit_code, 0);
  EXPECT_EQ(verdict->written_by, "h2");
  EXPECT_EQ(verdict->slurm_end, "cancelled by dlaunch: the batch host h0 was lost");
  // What is not a line of text is left out of the timeline.
  EXPECT_EQ(verdict->timeline, (std::vector<std::string>{"10:00:05 node 0 (h0) lost: no heartbeat for 30 s",
                                                         "10:00:40 h2 took its place"}));
}

TEST(RunVerdict, AfterARequeueTheLastRunsVerdictCounts) {
  test_support::TempDir dir;
  write_file(dir.path() + "/logs/result.json", R"({"state": "FAILED", "exit_code": 4})");
  write_file(dir.path() + "/logs/requeue_1/result.json", R"({"state": "COMPLETED", "exit_code": 0})");
  auto verdict = run_verdict(dir.path());
  ASSERT_TRUE(verdict);
  EXPECT_EQ(verdict->state, "COMPLETED");
  EXPECT_EQ(verdict->slurm_end, "");
  EXPECT_TRUE(verdict->timeline.empty());
}

TEST(RunVerdict, NoneWithoutAResultAStateOrReadableJson) {
  test_support::TempDir dir;
  EXPECT_EQ(run_verdict(dir.path()), std::nullopt);
  write_file(dir.path() + "/logs/result.json", R"({"exit_code": 0, "written_by": "h2"})");
  EXPECT_EQ(run_verdict(dir.path()), std::nullopt) << "no state";
  write_file(dir.path() + "/logs/result.json", R"({"state": "COMPL)");  // cut short by a full disk
  EXPECT_EQ(run_verdict(dir.path()), std::nullopt);
  write_file(dir.path() + "/logs/result.json", R"(["COMPLETED", 0])");
  EXPECT_EQ(run_verdict(dir.path()), std::nullopt);
}

// The batch host was lost and dlaunch cancelled the Slurm job once the
// job's verdict was in: Slurm records CANCELLED, the job completed.
TEST(JobStatus, AVerdictDlaunchEnforcedByCancellingTheJobIsTheJobsEnd) {
  test_support::TempDir dir;
  auto record = submission(dir.path() + "/s", "12");
  write_file(record.folder + "/logs/result.json", kVerdictResult);
  auto records = slurm::parse_job_records("JobId=12 JobState=CANCELLED Reason=None ExitCode=0:15 NodeList=n[0-2]\n");
  JobStatus status = job_status(record, records, {});
  EXPECT_EQ(status.state, "COMPLETED");
  EXPECT_EQ(status.exit_code, 0);
  EXPECT_EQ(status.reason, "Slurm records CANCELLED: cancelled by dlaunch: the batch host h0 was lost");
  EXPECT_EQ(status.source, "Slurm");
  EXPECT_EQ(state_text(status), "COMPLETED");

  auto json = status_json(record, status);
  EXPECT_EQ(json["state"], "COMPLETED");
  EXPECT_EQ(json["exit_code"], 0);
  EXPECT_EQ(json["verdict"]["state"], "COMPLETED");
  EXPECT_EQ(json["verdict"]["exit_code"], 0);
  EXPECT_EQ(json["verdict"]["written_by"], "h2");
  EXPECT_EQ(json["verdict"]["slurm_end"], "cancelled by dlaunch: the batch host h0 was lost");
  EXPECT_EQ(json["timeline"], nlohmann::json({"10:00:05 node 0 (h0) lost: no heartbeat for 30 s",
                                              "10:00:40 h2 took its place"}));
}

// The job runs on while Slurm still waits for a frozen node: the verdict
// is shown beside Slurm's state, which stays Slurm's until Slurm ends it.
TEST(JobStatus, AVerdictWhileSlurmStillRunsTheJobIsShownBesideSlurmsState) {
  test_support::TempDir dir;
  auto record = submission(dir.path() + "/s", "12");
  write_file(record.folder + "/logs/result.json", kVerdictResult);
  JobStatus status = job_status(record, slurm::parse_job_records("JobId=12 JobState=COMPLETING\n"), {});
  EXPECT_EQ(status.state, "COMPLETING");
  ASSERT_TRUE(status.verdict);
  EXPECT_EQ(status.verdict->state, "COMPLETED");
  EXPECT_EQ(status_json(record, status)["verdict"]["written_by"], "h2");
}

TEST(JobStatus, WithoutAVerdictTheJsonSaysSo) {
  test_support::TempDir dir;
  auto record = submission(dir.path() + "/s", "12");
  JobStatus status = job_status(record, slurm::parse_job_records("JobId=12 JobState=CANCELLED ExitCode=0:15\n"), {});
  EXPECT_EQ(status.state, "CANCELLED");
  auto json = status_json(record, status);
  EXPECT_TRUE(json["verdict"].is_null());
  EXPECT_EQ(json["timeline"], nlohmann::json::array());
}

}  // namespace
}  // namespace dlaunch::jobs
