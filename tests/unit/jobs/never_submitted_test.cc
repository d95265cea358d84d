// A submission sbatch refused: recorded in its folder, read back, and shown
// as NOT-SUBMITTED with sbatch's words, never as an unknown job or a --srun
// run.
#include "jobs/never_submitted.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

#include "../test_support/temp_dir.h"
#include "jobs/job_status.h"
#include "jobs/submission_record.h"

namespace dlaunch::jobs {
namespace {

// What sbatch says on a cluster without the partition asked for.
const NeverSubmitted kRefused{"sbatch", 1,
                              "sbatch: error: invalid partition specified: nosuch\n"
                              "sbatch: error: Batch job submission failed: Invalid partition name specified",
                              "2026-12-03T14:05:09", false};

// A submission folder as dlaunch submit leaves it after sbatch refused: no job_id.
std::string refused_folder(const std::string& root) {
  const std::string folder = root + "/20261203_140509";
  std::filesystem::create_directories(folder);
  std::ofstream(folder + "/config.json") << R"({"settings": {}, "command": ["train.py"],
      "timestamp": "20261203_140509", "job_name": "train"})";
  std::ofstream(folder + "/job.sbatch") << "#!/bin/bash\n";
  EXPECT_EQ(record_never_submitted(folder, kRefused), "");
  return folder;
}

TEST(NeverSubmitted, SummaryHasSbatchsVerdictAndCode) {
  EXPECT_EQ(never_submitted_summary(kRefused),
            "sbatch refused it, exit code 1: sbatch: error: Batch job submission failed: Invalid partition name "
            "specified");
  EXPECT_EQ(never_submitted_message(kRefused),
            "sbatch: error: invalid partition specified: nosuch / sbatch: error: Batch job submission failed: "
            "Invalid partition name specified");
  EXPECT_EQ(never_submitted_summary({"sbatch", std::nullopt, "cannot run 'sbatch': permission denied", "", false}),
            "sbatch could not be run: cannot run 'sbatch': permission denied");
  EXPECT_EQ(never_submitted_summary({"sbatch", 0, "", "", true}),
            "sbatch exited 0 but printed no job id: it said nothing");
}

TEST(NeverSubmitted, RecordedAndReadBack) {
  test_support::TempDir dir;
  const std::string folder = refused_folder(dir.path());
  auto read = read_never_submitted(folder);
  ASSERT_TRUE(read);
  EXPECT_EQ(read->program, "sbatch");
  EXPECT_EQ(read->exit_code, 1);
  EXPECT_EQ(read->message, kRefused.message);
  EXPECT_EQ(read->recorded, "2026-12-03T14:05:09");
  EXPECT_FALSE(read->may_be_queued);
}

TEST(NeverSubmitted, NoRecordOrAnUnreadableOneIsNone) {
  test_support::TempDir dir;
  EXPECT_EQ(read_never_submitted(dir.path()), std::nullopt);
  std::ofstream(dir.path() + "/" + kNotSubmittedFileName) << "{not json";
  EXPECT_EQ(read_never_submitted(dir.path()), std::nullopt);
}

TEST(NeverSubmitted, StatusSaysNotSubmittedWithSbatchsWordsNotSrunOrUnknown) {
  test_support::TempDir dir;
  SubmissionRecord record = read_submission(refused_folder(dir.path()));
  ASSERT_TRUE(record.never_submitted);
  EXPECT_EQ(record.job_id, "");
  JobStatus status = current_status(record);  // asks no Slurm: there is no job
  EXPECT_EQ(status.state, kNotSubmittedState);
  EXPECT_EQ(state_text(status),
            "NOT-SUBMITTED (sbatch refused it, exit code 1: sbatch: error: Batch job submission failed: Invalid "
            "partition name specified)");
  EXPECT_NE(status.source.find("dlaunch submit at 2026-12-03T14:05:09: sbatch said: sbatch: error: invalid "
                               "partition specified: nosuch"),
            std::string::npos)
      << status.source;
  EXPECT_EQ(status.source.find("srun"), std::string::npos) << status.source;
  EXPECT_TRUE(has_ended(status));  // nothing will ever run: logs --follow must not wait
  EXPECT_EQ(status_json(record, status)["state"], "NOT-SUBMITTED");
}

TEST(NeverSubmitted, JobsListsItAsNotSubmitted) {
  test_support::TempDir dir;
  refused_folder(dir.path());
  auto records = list_submissions({dir.path()});
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(job_status(records.front(), {}, {}).state, kNotSubmittedState);
}

TEST(NeverSubmitted, AJobIdThatMayBeQueuedIsUnknownNotRefused) {
  test_support::TempDir dir;
  const std::string folder = refused_folder(dir.path());
  ASSERT_EQ(record_never_submitted(folder, {"sbatch", 0, "wrapper: ok", "2026-12-03T14:05:09", true}), "");
  JobStatus status = job_status(read_submission(folder), {}, {});
  EXPECT_EQ(status.state, "UNKNOWN");
  EXPECT_EQ(status.reason, "sbatch exited 0 but printed no job id: wrapper: ok");
}

}  // namespace
}  // namespace dlaunch::jobs
