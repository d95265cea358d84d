// The OOM kill count of a memory cgroup, in both hierarchies' words, and
// the counter that says how many kills came since it was made.
#include "util/oom_counter.h"

#include <gtest/gtest.h>

#include "../test_support/files.h"
#include "../test_support/temp_dir.h"

namespace dlaunch::util {
namespace {

TEST(OomCounter, ReadsBothHierarchiesFiles) {
  // cgroup v2 memory.events, and v1 memory.oom_control.
  EXPECT_EQ(parse_oom_kill_count("low 0\nhigh 0\nmax 12\noom 3\noom_kill 2\noom_group_kill 0\n"), 2U);
  EXPECT_EQ(parse_oom_kill_count("oom_kill_disable 0\nunder_oom 0\noom_kill 5\n"), 5U);
  EXPECT_FALSE(parse_oom_kill_count("oom_kill_disable 0\nunder_oom 0\n")) << "a kernel before 4.13";
  EXPECT_FALSE(parse_oom_kill_count("oom_kill -1\n"));
  EXPECT_FALSE(parse_oom_kill_count(""));
}

TEST(OomCounter, FindsTheV1MemoryPath) {
  EXPECT_EQ(memory_cgroup_v1_path("12:pids:/a\n4:memory:/slurm/uid_1000/job_7/step_0\n0::/\n"),
            "/slurm/uid_1000/job_7/step_0");
  EXPECT_EQ(memory_cgroup_v1_path("3:cpu,memory:/x\n"), "/x");
  EXPECT_FALSE(memory_cgroup_v1_path("0::/user.slice\n"));
  EXPECT_FALSE(memory_cgroup_v1_path("garbage"));
}

TEST(OomCounter, CountsTheKillsSinceItWasMade) {
  test_support::TempDir dir;
  const std::string file = dir.path() + "/memory.events";
  test_support::write_file(file, "oom 4\noom_kill 3\n");
  OomCounter counter(file);
  EXPECT_EQ(counter.kills_since_start(), 0U);
  test_support::write_file(file, "oom 5\noom_kill 4\n");
  EXPECT_EQ(counter.kills_since_start(), 1U);
  EXPECT_FALSE(OomCounter(std::nullopt).kills_since_start());
  EXPECT_FALSE(OomCounter(dir.path() + "/missing").kills_since_start());
}

}  // namespace
}  // namespace dlaunch::util
