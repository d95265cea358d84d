// sbatch's forms of --time and --mem: what sbatch takes passes, anything
// else is named with the forms that exist.
#include "slurm/request_values.h"

#include <gtest/gtest.h>

#include <string>

#include "../test_support/text.h"

namespace dlaunch::slurm {
namespace {

using test_support::contains;

TEST(RequestValues, TheTimeLimitsSbatchTakesPass) {
  for (const char* time : {"30", "30:00", "2:00:00", "1-0", "1-12:30", "1-00:00:00", "UNLIMITED", "infinite", "0"})
    EXPECT_EQ(time_limit_problem(time), std::nullopt) << time;
}

TEST(RequestValues, AnyOtherTimeNamesTheForms) {
  for (const char* time : {"tomorrow", "2h", "", "1-", "-5", "1:2:3:4", "1-1:2:3:4", "1.5", "1 day"})
    EXPECT_NE(time_limit_problem(time), std::nullopt) << time;
  EXPECT_TRUE(contains(*time_limit_problem("2h"), "D-HH:MM:SS, e.g. 1-00:00:00"));
}

TEST(RequestValues, MemorySizesWithAnOptionalUnit) {
  for (const char* size : {"64G", "500M", "1T", "1024", "64g", "0"}) EXPECT_EQ(memory_size_problem(size), std::nullopt);
  for (const char* size : {"64GB", "lots", "", "G", "1.5G", "-1"}) EXPECT_NE(memory_size_problem(size), std::nullopt);
  EXPECT_TRUE(contains(*memory_size_problem("64GB"), "e.g. 64G"));
}

}  // namespace
}  // namespace dlaunch::slurm
