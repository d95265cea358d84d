// Cancelling a job: the scancel command lines dlaunch runs, with fake
// scontrol and scancel first in PATH that record their arguments. The id
// goes after "--", and one that is no job id reaches no Slurm command
// (issue 24: a job_id file reading "--user=root" reached scancel as an
// option, which would cancel every job of that user).
#include "submit/job_cancel.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>

#include "../test_support/temp_dir.h"
#include "util/error.h"

namespace dlaunch::submit {
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

}  // namespace
}  // namespace dlaunch::submit
