// sbatch's --array grammar, as sbatch 22.05 reads it (stricter where
// array_spec.h says so).
#include "slurm/array_spec.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../test_support/text.h"
#include "util/error.h"

namespace dlaunch::slurm {
namespace {

using Ids = std::vector<std::int64_t>;
using test_support::contains;

Ids ids_of(const std::string& spec) { return parse_array_spec(spec, "--array").task_ids(); }

// The InputError message SPEC gives, or "" if it parses.
std::string error_of(const std::string& spec) {
  try {
    parse_array_spec(spec, "--array '" + spec + "' (from --sbatch-arg)");
  } catch (const util::InputError& error) {
    return error.what();
  }
  return "";
}

TEST(ArraySpec, SingleIndexRangeAndList) {
  EXPECT_EQ(ids_of("7"), (Ids{7}));
  EXPECT_EQ(ids_of("0-3"), (Ids{0, 1, 2, 3}));
  EXPECT_EQ(ids_of("1,3,5-7"), (Ids{1, 3, 5, 6, 7}));
  EXPECT_EQ(ids_of("4-4"), (Ids{4}));
}

TEST(ArraySpec, StepTakesEveryNthIndexFromTheStart) {
  EXPECT_EQ(ids_of("0-15:4"), (Ids{0, 4, 8, 12}));
  EXPECT_EQ(ids_of("1-10:3"), (Ids{1, 4, 7, 10}));
  EXPECT_EQ(ids_of("0-3:10"), (Ids{0}));
}

TEST(ArraySpec, DuplicatesAndOrderCollapseAsInSlurmsBitmap) {
  ArraySpec spec = parse_array_spec("5,0-3,2", "--array");
  EXPECT_EQ(spec.named_count(), 6);
  EXPECT_EQ(spec.task_ids(), (Ids{0, 1, 2, 3, 5}));
}

TEST(ArraySpec, PercentLimitsTheTasksRunningAtOnce) {
  ArraySpec spec = parse_array_spec("0-7%2", "--array");
  EXPECT_EQ(spec.max_parallel, 2);
  EXPECT_EQ(spec.task_ids().size(), 8u);
  EXPECT_FALSE(parse_array_spec("0-7", "--array").max_parallel);
  EXPECT_EQ(parse_array_spec("1,3%1", "--array").max_parallel, 1);
}

TEST(ArraySpec, ScontrolsPendingRecordsReadTheSame) {
  // scontrol show job -o: ArrayTaskId=2-3, ArrayTaskId=4-7%2
  EXPECT_EQ(ids_of("2-3"), (Ids{2, 3}));
  EXPECT_EQ(ids_of("4-7%2"), (Ids{4, 5, 6, 7}));
}

TEST(ArraySpec, LargestIndexIsSlurmsLargest) {
  EXPECT_EQ(ids_of("4000000"), (Ids{kMaxArrayIndex}));
  EXPECT_TRUE(contains(error_of("4000001"), "above 4000000"));
  EXPECT_TRUE(contains(error_of("0-99999999999"), "not an index or a range"));
}

TEST(ArraySpec, RefusesWhatSbatchWouldNotTakeNamingTheItem) {
  for (const char* spec : {"", "a", "0-", "-3", "1-2-3", "0,,1", ",1", "1,", "0-3:", "0-3:0", "3-1", "0-3%",
                           "0-3%0", "0-3%x", "0-3%2%3", "%2", " 1", "+1", "[0-3]", "0x3", "1:2"}) {
    std::string message = error_of(spec);
    EXPECT_FALSE(message.empty()) << "accepted '" << spec << "'";
    EXPECT_TRUE(contains(message, "(from --sbatch-arg)")) << message;
    EXPECT_TRUE(contains(message, "e.g. --array=0-15:4%2")) << message;
  }
  EXPECT_TRUE(contains(error_of("0-3,5-x"), "'5-x' is not an index or a range"));
  EXPECT_TRUE(contains(error_of("3-1"), "the range '3-1' ends below its start"));
  EXPECT_TRUE(contains(error_of("0-3:0"), "the step of '0-3:0' must be a whole number from 1"));
  EXPECT_TRUE(contains(error_of("0-3%0"), "'%0' must give the most tasks to run at once"));
}

}  // namespace
}  // namespace dlaunch::slurm
