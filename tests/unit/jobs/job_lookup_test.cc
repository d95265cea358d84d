// Finding a submitted job from what the user typed after `dlaunch status`,
// `logs` or `cancel`: "last", a submission or task folder, a job id found in
// the submission folders or, failing that, through Slurm's StdOut of the
// job (a fake scontrol first in PATH); and where submission folders are
// looked for.
#include "jobs/job_lookup.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "../test_support/files.h"
#include "../test_support/input_error.h"
#include "../test_support/temp_dir.h"
#include "slurm/slurm_command.h"

namespace dlaunch::jobs {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

using test_support::write_file;

class JobLookup : public ::testing::Test {
 protected:
  void SetUp() override {
    previous_path_ = std::getenv("PATH");
    ::setenv("PATH", (dir_.path() + "/bin:" + previous_path_).c_str(), 1);
    fake("scontrol", "echo 'slurm_load_jobs error: Invalid job id specified' >&2; exit 1");
  }
  void TearDown() override { ::setenv("PATH", previous_path_.c_str(), 1); }

  void fake(const std::string& name, const std::string& body) {
    const std::string script = dir_.path() + "/bin/" + name;
    write_file(script, "#!/bin/sh\n" + body + "\n");
    fs::permissions(script, fs::perms::owner_all);
  }
  // A submission folder NAME (a timestamp) of job JOB_ID under outputs/,
  // with TASKS tasks when it is an array.
  std::string submission(const std::string& name, const std::string& job_id, int tasks = 0) {
    const std::string folder = outputs() + "/" + name;
    write_file(folder + "/config.json", R"({"settings": {}, "command": ["train.py"], "timestamp": ")" + name + "\"}");
    write_file(folder + "/job_id", job_id + "\n");
    if (tasks == 0) return folder;
    std::string entries;
    for (int i = 0; i < tasks; ++i) {
      write_file(folder + "/task_" + std::to_string(i) + "/config.json", "{}");
      entries += (i == 0 ? "" : ",") + std::string(R"({"index": )") + std::to_string(i) + R"(, "folder": "task_)" +
                 std::to_string(i) + R"(", "values": {}})";
    }
    write_file(folder + "/sweep.json", R"({"tasks": [)" + entries + "]}");
    return folder;
  }
  std::string outputs() const { return dir_.path() + "/outputs"; }
  std::vector<std::string> dirs() const { return {outputs()}; }

  test_support::TempDir dir_;
  std::string previous_path_;
};

TEST_F(JobLookup, LastIsTheNewestSubmission) {
  submission("20261203_140509", "11");
  submission("20261203_150000", "12");
  submission("20261203_140510", "13");
  EXPECT_EQ(find_job("last", dirs()).record.job_id, "12");
}

TEST_F(JobLookup, LastWithoutSubmissionsSaysWhereItLooked) {
  EXPECT_THAT(test_support::input_error_of([&] { (void)find_job("last", dirs()); }),
              HasSubstr("no submission folder in " + outputs()));
}

TEST_F(JobLookup, AJobIdIsFoundAmongTheSubmissions) {
  submission("20261203_140509", "11");
  const std::string folder = submission("20261203_140510", "12");
  FoundJob found = find_job("12", dirs());
  EXPECT_EQ(found.record.folder, folder);
  EXPECT_EQ(found.task, std::nullopt);
}

TEST_F(JobLookup, AnArrayTaskIdNamesTheTask) {
  submission("20261203_140509", "20", 4);
  FoundJob found = find_job("20_3", dirs());
  EXPECT_EQ(found.record.job_id, "20");
  EXPECT_EQ(found.task, 3);
}

TEST_F(JobLookup, AFolderAndATaskFolderAreTheirSubmission) {
  const std::string folder = submission("20261203_140509", "20", 2);
  EXPECT_EQ(find_job(folder, {}).record.job_id, "20");
  EXPECT_EQ(find_job(folder, {}).task, std::nullopt);
  FoundJob task = find_job(folder + "/task_1", {});
  EXPECT_EQ(task.record.folder, folder);
  EXPECT_EQ(task.task, 1);
}

TEST_F(JobLookup, AFolderThatIsNoSubmissionIsNamed) {
  fs::create_directories(dir_.path() + "/plain");
  EXPECT_THAT(test_support::input_error_of([&] { (void)find_job(dir_.path() + "/plain", dirs()); }),
              HasSubstr("is neither a dlaunch submit folder"));
}

// A job submitted from elsewhere: Slurm's StdOut leads to its folder.
TEST_F(JobLookup, AJobIdNotAmongTheSubmissionsIsFoundThroughSlurmsLog) {
  const std::string elsewhere = dir_.path() + "/elsewhere";
  fs::create_directories(elsewhere);
  fs::rename(submission("20261203_140509", "77"), elsewhere + "/20261203_140509");
  fake("scontrol", "echo 'JobId=77 JobState=RUNNING StdOut=" + elsewhere + "/20261203_140509/slurm-77.log'");
  EXPECT_EQ(find_job("77", dirs()).record.folder, elsewhere + "/20261203_140509");
}

TEST_F(JobLookup, AJobIdNeitherHereNorInSlurmSaysWhatToDo) {
  EXPECT_THAT(test_support::input_error_of([&] { (void)find_job("99", dirs()); }),
              HasSubstr("no submission of job 99 in " + outputs()));
}

// Slurm's commands here but no configuration: said so, and that no
// submission folder knows the job either.
TEST_F(JobLookup, AJobIdWhenSlurmIsNotConfiguredSaysBoth) {
  const char* previous = std::getenv("SLURM_CONF");
  std::string kept = previous ? previous : "";
  ::setenv("SLURM_CONF", (dir_.path() + "/no/slurm.conf").c_str(), 1);
  submission("20261203_140509", "11");
  std::string error;
  try {
    (void)find_job("99", dirs());
  } catch (const slurm::NotConfigured& unconfigured) {
    error = unconfigured.what();
  }
  if (previous) ::setenv("SLURM_CONF", kept.c_str(), 1);
  else ::unsetenv("SLURM_CONF");
  EXPECT_THAT(error, HasSubstr("Slurm is not configured on this machine: SLURM_CONF names " + dir_.path() +
                               "/no/slurm.conf, which does not exist"));
  EXPECT_THAT(error, HasSubstr("No submission folder in " + outputs() + " knows job 99 either"));
}

TEST_F(JobLookup, AnythingElseIsRefusedWithTheShapesItMayHave) {
  for (const char* typed : {"--user=root", "12x", "last2", ""}) {
    EXPECT_THAT(test_support::input_error_of([&] { (void)find_job(typed, dirs()); }),
                HasSubstr("is neither a job id"))
        << typed;
  }
}

TEST_F(JobLookup, SlurmsFolderOfAJobIsItsLogsFolder) {
  fake("scontrol", "echo 'JobId=5 JobState=PENDING StdOut=/shared/runs/20261203_140509/slurm-5.log'");
  EXPECT_EQ(slurm_job_folder("5"), "/shared/runs/20261203_140509");
  fake("scontrol", "echo 'slurm_load_jobs error: Invalid job id specified' >&2; exit 1");
  EXPECT_EQ(slurm_job_folder("5"), std::nullopt);
}

TEST_F(JobLookup, SubmissionDirsAreTheGivenOneElseEveryConfiguredOne) {
  EXPECT_EQ(submission_dirs(std::string("runs/../runs"), util::Environment()),
            (std::vector<std::string>{fs::absolute("runs").string()}));
  write_file(dir_.path() + "/config/dlaunch/config.toml",
        "[defaults]\noutput-dir = \"/scratch/a\"\n[profiles.big]\noutput-dir = \"/scratch/b\"\n"
        "[profiles.same]\noutput-dir = \"/scratch/a\"\n");
  util::Environment environment({{"XDG_CONFIG_HOME", dir_.path() + "/config"}});
  EXPECT_EQ(submission_dirs(std::nullopt, environment),
            (std::vector<std::string>{fs::absolute("slurm-outputs").string(), "/scratch/a", "/scratch/b"}));
}

}  // namespace
}  // namespace dlaunch::jobs
