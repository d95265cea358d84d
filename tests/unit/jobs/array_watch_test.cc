// Following a job array: what scontrol's records say about each task, the
// live lines, the final table and the verdict.
#include "jobs/array_watch.h"

#include <gtest/gtest.h>

namespace dlaunch::jobs {
namespace {

submit::JobArray sweep_array() {
  submit::JobArray array;
  array.spec = "0-3";
  array.swept = true;
  array.tasks = submit::sweep_tasks(submit::parse_sweep({"lr=0.1,0.01", "bs=32,64"}, "--sweep"));
  return array;
}

TaskStatus ended(const std::string& state, std::optional<int> code) {
  TaskStatus status;
  status.state = state;
  status.ended = true;
  status.exit_code = code;
  return status;
}

TEST(ArrayWatch, PendingRecordsStandForEachOfTheirTasks) {
  auto statuses = task_statuses(slurm::parse_job_records(
      "JobId=20 ArrayJobId=20 ArrayTaskId=4-7%2 JobState=PENDING Reason=JobArrayTaskLimit RunTime=00:00:00 "
      "ExitCode=0:0\n"
      "JobId=21 ArrayJobId=20 ArrayTaskId=0 JobState=RUNNING Reason=None RunTime=00:00:14 ExitCode=0:0\n"
      "JobId=22 ArrayJobId=20 ArrayTaskId=1 JobState=COMPLETED Reason=None RunTime=00:00:03 ExitCode=0:0\n"
      "JobId=23 ArrayJobId=20 ArrayTaskId=2 JobState=FAILED Reason=NonZeroExitCode RunTime=00:00:02 "
      "ExitCode=3:0\n"
      "JobId=24 ArrayJobId=20 ArrayTaskId=3 JobState=CANCELLED Reason=None RunTime=00:00:01 ExitCode=0:15\n"
      "JobId=25 JobState=RUNNING\n"));
  ASSERT_EQ(statuses.size(), 8u);
  for (std::int64_t id : {4, 5, 6, 7}) {
    EXPECT_EQ(statuses[id].state, "PENDING");
    EXPECT_EQ(statuses[id].reason, "JobArrayTaskLimit");
    EXPECT_FALSE(statuses[id].ended);
  }
  EXPECT_EQ(statuses[0].state, "RUNNING");
  EXPECT_EQ(statuses[0].seconds, 14);
  EXPECT_FALSE(statuses[0].ended);
  EXPECT_EQ(statuses[1].exit_code, 0);
  EXPECT_TRUE(statuses[1].ended);
  EXPECT_EQ(statuses[2].exit_code, 3);
  EXPECT_EQ(statuses[3].exit_code, 128 + 15);
}

TEST(ArrayWatch, AnEndOtherThanCompletedIsNeverExitCodeZero) {
  auto statuses = task_statuses(slurm::parse_job_records(
      "JobId=21 ArrayJobId=20 ArrayTaskId=0 JobState=TIMEOUT ExitCode=0:0\n"
      "JobId=22 ArrayJobId=20 ArrayTaskId=1 JobState=NODE_FAIL ExitCode=garbage\n"));
  EXPECT_EQ(statuses[0].exit_code, 1);
  EXPECT_EQ(statuses[1].exit_code, 1);
}

TEST(ArrayWatch, UnreadableOrHugeTaskIdsAreSkipped) {
  EXPECT_TRUE(task_statuses(slurm::parse_job_records("JobId=1 ArrayJobId=1 ArrayTaskId=x JobState=PENDING\n"
                                                     "JobId=1 ArrayJobId=1 ArrayTaskId=0-4000000 JobState=PENDING\n"))
                  .empty());
}

TEST(ArrayWatch, OneLinePerTaskNamingItsValues) {
  submit::JobArray array = sweep_array();
  TaskStatus running;
  running.state = "RUNNING";
  running.seconds = 14;
  EXPECT_EQ(task_line(array.tasks[2], running), "task 2 (lr=0.01 bs=32): RUNNING, 14 s");
  TaskStatus pending;
  pending.state = "PENDING";
  pending.reason = "Priority";
  pending.seconds = 3;
  EXPECT_EQ(task_line(array.tasks[0], pending), "task 0 (lr=0.1 bs=32): PENDING (Priority), 3 s");
  pending.reason = "None";
  EXPECT_EQ(task_line(array.tasks[0], pending), "task 0 (lr=0.1 bs=32): PENDING, 3 s");
  EXPECT_EQ(task_line(array.tasks[3], ended("FAILED", 3)), "task 3 (lr=0.01 bs=64): FAILED with exit code 3");
  EXPECT_EQ(task_line(array.tasks[1], TaskStatus{}), "task 1 (lr=0.1 bs=64): not shown by Slurm yet");
  EXPECT_EQ(task_line(array.tasks[1], ended("UNKNOWN", std::nullopt)),
            "task 1 (lr=0.1 bs=64): ended unseen (Slurm forgot it before dlaunch saw its end); exit code unknown");
  EXPECT_EQ(task_line(submit::SweepTask{5, {}, {}}, running), "task 5: RUNNING, 14 s");
}

TEST(ArrayWatch, TheTableAndTheFailedTasks) {
  submit::JobArray array = sweep_array();
  std::vector<TaskStatus> statuses = {ended("COMPLETED", 0), ended("COMPLETED", 0), ended("COMPLETED", 0),
                                      ended("FAILED", 3)};
  EXPECT_EQ(array_table(array, statuses, "/out/s"),
            "task  values         state      exit code  folder\n"
            "0     lr=0.1 bs=32   COMPLETED  0          /out/s/task_0\n"
            "1     lr=0.1 bs=64   COMPLETED  0          /out/s/task_1\n"
            "2     lr=0.01 bs=32  COMPLETED  0          /out/s/task_2\n"
            "3     lr=0.01 bs=64  FAILED     3          /out/s/task_3\n");
  EXPECT_EQ(failed_task_lines(array, statuses, "/out/s", "12"),
            std::vector<std::string>{
                "task 3 (lr=0.01 bs=64) FAILED with exit code 3; log: /out/s/task_3/slurm-12_3.log"});
  EXPECT_EQ(array_exit_code(statuses), 3);
}

TEST(ArrayWatch, ExitCodeIsZeroOnlyWhenEveryTaskCompletedWithZero) {
  EXPECT_EQ(array_exit_code({ended("COMPLETED", 0), ended("COMPLETED", 0)}), 0);
  EXPECT_EQ(array_exit_code({ended("COMPLETED", 0), ended("CANCELLED", 143), ended("FAILED", 2)}), 143);
  EXPECT_EQ(array_exit_code({ended("UNKNOWN", std::nullopt), ended("FAILED", 2)}), 1);
  submit::JobArray raw;
  raw.tasks = {submit::SweepTask{7, {}, {}}};
  EXPECT_EQ(failed_task_lines(raw, {ended("UNKNOWN", std::nullopt)}, "/s", "9"),
            std::vector<std::string>{"task 7 ended, exit code unknown (Slurm forgot it before dlaunch saw its "
                                     "end); log: /s/task_7/slurm-9_7.log"});
  EXPECT_EQ(array_table(raw, {ended("COMPLETED", 0)}, "/s"),
            "task  values  state      exit code  folder\n"
            "7     -       COMPLETED  0          /s/task_7\n");
}

}  // namespace
}  // namespace dlaunch::jobs
