// Job ids as they reach scontrol, scancel and sacct: checked, after "--".
#include "slurm/job_id.h"

#include <gtest/gtest.h>

#include "../test_support/input_error.h"

namespace dlaunch::slurm {
namespace {

TEST(IsJobId, TakesJobsArrayTasksAndHetComponents) {
  for (const char* id : {"1", "12", "4294967294", "12_3", "12_4000000", "12+0", "12+1"})
    EXPECT_TRUE(is_job_id(id)) << id;
}

TEST(IsJobId, RefusesOptionsAndEverythingElse) {
  for (const char* text : {"", "--user=root", "-u", "12 13", "12,13", "12_", "_3", "12+", "12_3_4", "12_3+1",
                           "12345678901", "12_12345678", "12+12345", "12\n", " 12", "last", "12;rm", "12_-1"})
    EXPECT_FALSE(is_job_id(text)) << text;
}

TEST(CheckedJobId, NamesWhereTheTextCameFromAndEscapesIt) {
  std::string error = test_support::input_error_of([] { (void)checked_job_id("--user=root\x1b[2J", "/f/job_id"); });
  EXPECT_NE(error.find("/f/job_id holds \"--user=root\\x1b[2J\", which is not a Slurm job id"), std::string::npos)
      << error;
  EXPECT_NE(error.find("no Slurm command is run with it"), std::string::npos) << error;
  EXPECT_EQ(checked_job_id("12_3", "x"), "12_3");
}

TEST(JobCommand, PutsTheIdAfterTheEndOfOptions) {
  EXPECT_EQ(job_command({"scancel", "--signal=USR1"}, "12_3"),
            (std::vector<std::string>{"scancel", "--signal=USR1", "--", "12_3"}));
  std::string error = test_support::input_error_of([] { (void)job_command({"scancel"}, "--user=root"); });
  EXPECT_NE(error.find("the job id given to scancel holds \"--user=root\""), std::string::npos) << error;
}

}  // namespace
}  // namespace dlaunch::slurm
