// A submission folder read back, when it may be shared, copied or damaged
// (issue 24): every file is read only when it is a regular file of bounded
// size, JSON only when nested a bounded depth, the job id only when it is
// one; a folder that fails is named with what is wrong, and `dlaunch jobs`
// lists the others.
#include "jobs/submission_record.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../test_support/files.h"
#include "../test_support/input_error.h"
#include "../test_support/temp_dir.h"

namespace dlaunch::jobs {
namespace {

using test_support::write_file;

// FOLDER made a submission folder of job JOB_ID.
std::string submission(const std::string& folder, const std::string& job_id = "12") {
  write_file(folder + "/config.json", R"({"settings": {}, "command": ["train.py"], "timestamp": "20261203_140509"})");
  write_file(folder + "/job_id", job_id + "\n");
  return folder;
}

TEST(ReadSubmission, ReadsTheJobIdAndConfig) {
  test_support::TempDir dir;
  auto record = read_submission(submission(dir.path() + "/s", "4242_7"));
  EXPECT_EQ(record.job_id, "4242_7");
  EXPECT_EQ(record.name, "train.py");
}

TEST(ReadSubmission, AJobIdThatIsAnOptionIsRefusedNamingTheFile) {
  test_support::TempDir dir;
  const std::string folder = submission(dir.path() + "/s", "--user=root");
  std::string error = test_support::input_error_of([&] { (void)read_submission(folder); });
  EXPECT_NE(error.find(folder + "/job_id holds \"--user=root\", which is not a Slurm job id"), std::string::npos)
      << error;
}

TEST(ReadSubmission, AJobIdFifoIsRefusedNotWaitedOn) {
  test_support::TempDir dir;
  const std::string folder = submission(dir.path() + "/s");
  std::filesystem::remove(folder + "/job_id");
  ASSERT_EQ(::mkfifo((folder + "/job_id").c_str(), 0600), 0);
  std::string error = test_support::input_error_of([&] { (void)read_submission(folder); });
  EXPECT_NE(error.find(folder + "/job_id is a FIFO"), std::string::npos) << error;
}

TEST(ReadSubmission, ADeeplyNestedConfigIsRefusedNotACrash) {
  test_support::TempDir dir;
  const std::string folder = submission(dir.path() + "/s");
  write_file(folder + "/config.json", std::string(1'500'000, '['));
  std::string error = test_support::input_error_of([&] { (void)read_submission(folder); });
  EXPECT_NE(error.find(folder + "/config.json is not valid JSON (nested deeper than 64 levels)"),
            std::string::npos)
      << error;
}

TEST(ReadSubmission, AConfigLinkedElsewhereIsRefused) {
  test_support::TempDir dir;
  const std::string folder = submission(dir.path() + "/s");
  std::filesystem::rename(folder + "/config.json", dir.path() + "/elsewhere.json");
  ASSERT_EQ(::symlink((dir.path() + "/elsewhere.json").c_str(), (folder + "/config.json").c_str()), 0);
  std::string error = test_support::input_error_of([&] { (void)read_submission(folder); });
  EXPECT_NE(error.find(folder + "/config.json is a symbolic link"), std::string::npos) << error;
}

TEST(ListSubmissions, LeavesOutFoldersThatFailAndSaysWhy) {
  test_support::TempDir dir;
  submission(dir.path() + "/20261203_140509", "12");
  submission(dir.path() + "/20261203_140510", "--user=root");
  write_file(submission(dir.path() + "/20261203_140511") + "/config.json", std::string(100, '{'));
  std::vector<std::string> left_out;
  auto records = list_submissions({dir.path()}, &left_out);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].job_id, "12");
  ASSERT_EQ(left_out.size(), 2u);
}

TEST(FolderRunResult, AHostileResultIsNoResult) {
  test_support::TempDir dir;
  const std::string folder = submission(dir.path() + "/s");
  write_file(folder + "/logs/result.json", std::string(1'000'000, '['));
  EXPECT_EQ(run_result(folder), std::nullopt);
  EXPECT_EQ(recorded_end(folder), std::nullopt);
  std::filesystem::remove(folder + "/logs/result.json");
  ASSERT_EQ(::symlink("/dev/zero", (folder + "/logs/result.json").c_str()), 0);
  EXPECT_EQ(run_verdict(folder), std::nullopt);
  ASSERT_EQ(::mkfifo((folder + "/state.json").c_str(), 0600), 0);
  EXPECT_EQ(recorded_end(folder), std::nullopt);
}

}  // namespace
}  // namespace dlaunch::jobs
