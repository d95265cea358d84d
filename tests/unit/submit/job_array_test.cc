// Which submissions are job arrays: --sweep, or an --array among the sbatch args.
#include "submit/job_array.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../test_support/input_error.h"

namespace dlaunch::submit {
namespace {

using test_support::input_error_of;
using Strings = std::vector<std::string>;
using Ids = std::vector<std::int64_t>;

SubmitSettings with(std::initializer_list<std::pair<const char*, Value>> values) {
  SubmitSettings settings = default_submit_settings();
  for (const auto& [name, value] : values) settings.set(name, value, std::string("--") + name);
  return settings;
}

Ids ids_of(const JobArray& array) {
  Ids ids;
  for (const auto& task : array.tasks) ids.push_back(task.index);
  return ids;
}

std::string array_error(const SubmitSettings& settings, Strings sbatch_args = {}) {
  return input_error_of([&] { job_array_of(settings, sbatch_args); });
}

TEST(JobArray, NoSweepAndNoArrayIsNoArray) {
  Strings args{"--reservation=r1"};
  EXPECT_FALSE(job_array_of(with({}), args));
  EXPECT_EQ(args, Strings{"--reservation=r1"});
}

TEST(JobArray, ASweepIsAnArrayOverItsProduct) {
  Strings args{"--reservation=r1"};
  auto array = job_array_of(with({{"sweep", Strings{"lr=0.1,0.01", "bs=32,64"}}, {"max-parallel", std::int64_t{3}}}), args);
  ASSERT_TRUE(array);
  EXPECT_TRUE(array->swept);
  EXPECT_EQ(array->spec, "0-3%3");
  EXPECT_EQ(array->max_parallel, 3);
  EXPECT_EQ(ids_of(*array), (Ids{0, 1, 2, 3}));
  EXPECT_EQ(array->tasks[3].args, (Strings{"--lr=0.01", "--bs=64"}));
  EXPECT_EQ(args, Strings{"--reservation=r1"});
  EXPECT_EQ(job_array_of(with({{"sweep", Strings{"seed=7"}}}), args)->spec, "0-0");
}

TEST(JobArray, EverySpellingOfSbatchsArrayOptionIsTakenOutOfTheSbatchArgs) {
  for (const Strings& given : {Strings{"--array=0-2"}, Strings{"--array", "0-2"}, Strings{"-a", "0-2"},
                               Strings{"-a0-2"}, Strings{"--arr=0-2"}, Strings{"--ar", "0-2"}}) {
    Strings args = given;
    args.insert(args.begin(), "--comment=x");
    args.push_back("--reservation=r1");
    auto array = job_array_of(with({}), args);
    ASSERT_TRUE(array) << given.front();
    EXPECT_FALSE(array->swept);
    EXPECT_EQ(array->spec, "0-2");
    EXPECT_EQ(ids_of(*array), (Ids{0, 1, 2}));
    EXPECT_TRUE(array->tasks[1].values.empty());
    EXPECT_TRUE(array->tasks[1].args.empty());
    EXPECT_EQ(args, (Strings{"--comment=x", "--reservation=r1"})) << given.front();
  }
  // Not --array: --account, --acctg-freq, -A.
  Strings others{"--account=a", "--acctg-freq=1", "-A", "b", "--a=1"};
  EXPECT_FALSE(job_array_of(with({}), others));
  EXPECT_EQ(others.size(), 5u);
}

TEST(JobArray, ARawArrayKeepsItsSpecAndGetsMaxParallelAdded) {
  Strings args{"--array=1,5-9:4%2"};
  auto array = job_array_of(with({}), args);
  EXPECT_EQ(array->spec, "1,5-9:4%2");
  EXPECT_EQ(array->max_parallel, 2);
  EXPECT_EQ(ids_of(*array), (Ids{1, 5, 9}));
  Strings limited{"--array=0-7"};
  auto with_limit = job_array_of(with({{"max-parallel", std::int64_t{2}}}), limited);
  EXPECT_EQ(with_limit->spec, "0-7%2");
  EXPECT_EQ(with_limit->max_parallel, 2);
}

TEST(JobArray, RefusalsNameTheSettingsAndWhatToDo) {
  auto contains = [](const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; };
  std::string bad = array_error(with({}), {"--array=0-3x"});
  EXPECT_TRUE(contains(bad, "--array '0-3x' (from sbatch-arg '--array=0-3x', --sbatch-arg): '0-3x' is not an index or a range"))
      << bad;
  EXPECT_TRUE(contains(array_error(with({}), {"--reservation=r", "-a"}), "sbatch-arg '-a' (from --sbatch-arg) needs the array's indices"));
  EXPECT_TRUE(contains(array_error(with({}), {"--array=1", "-a2"}), "holds --array twice ('--array=1' and '-a2')"));
  std::string both = array_error(with({{"sweep", Strings{"lr=1,2"}}}), {"--array=0-1"});
  EXPECT_TRUE(contains(both, "sweep (from --sweep) and sbatch-arg '--array=0-1' (from --sbatch-arg) both make a job array"))
      << both;
  std::string big = array_error(with({}), {"--array=0-10000"});
  EXPECT_TRUE(contains(big, "names 10001 tasks; dlaunch submit makes a folder for each and takes at most 10000")) << big;
  std::string two_limits = array_error(with({{"max-parallel", std::int64_t{2}}}), {"--array=0-3%1"});
  EXPECT_TRUE(contains(two_limits, "max-parallel (from --max-parallel) and the '%1' of --array '0-3%1'")) << two_limits;
  std::string alone = array_error(with({{"max-parallel", std::int64_t{2}}}));
  EXPECT_TRUE(contains(alone, "max-parallel (from --max-parallel) limits the tasks of a job array")) << alone;
  EXPECT_TRUE(contains(array_error(with({{"sweep", Strings{"a=1"}}, {"max-parallel", std::int64_t{0}}})),
                       "max-parallel must be from 1 to 10000, got 0"));
  std::string srun = array_error(with({{"sweep", Strings{"lr=1,2"}}, {"srun", true}}));
  EXPECT_TRUE(contains(srun, "sweep (from --sweep) cannot be used with --srun (from --srun)")) << srun;
  EXPECT_TRUE(contains(array_error(with({{"srun", true}}), {"--array=0-1"}),
                       "sbatch-arg '--array=0-1' (from --sbatch-arg) cannot be used with --srun"));
}

TEST(JobArray, TaskFoldersAreNamedByIndex) { EXPECT_EQ(task_folder_name(12), "task_12"); }

}  // namespace
}  // namespace dlaunch::submit
