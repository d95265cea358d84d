// SLURM_TASKS_PER_NODE's compressed layout ("4(x2),2").
#include "slurm/tasks_per_node.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "util/error.h"

namespace dlaunch::slurm {
namespace {

TEST(TasksPerNode, ParsesSlurmsCompressedLayout) {
  EXPECT_EQ(slurm::parse_tasks_per_node("4(x2),2"), (std::vector<int>{4, 4, 2}));
  EXPECT_EQ(slurm::parse_tasks_per_node("1"), (std::vector<int>{1}));
  EXPECT_EQ(slurm::parse_tasks_per_node("2,3(x1)"), (std::vector<int>{2, 3}));
  for (const char* bad : {"", "x", "4(2)", "4(x)", "4(x2", "-1", "4(x0)"})
    EXPECT_THROW(slurm::parse_tasks_per_node(bad), util::InputError) << bad;
}

// Found by fuzz/slurm_env_fuzz: every repeat was capped, their sum was not,
// so 4 KB of "1(x1000000)," asked for gigabytes.
TEST(TasksPerNode, RefusesMoreThanAMillionNodesInAll) {
  EXPECT_EQ(slurm::parse_tasks_per_node("1(x999999),2").size(), 1'000'000u);
  EXPECT_THROW(slurm::parse_tasks_per_node("1(x999999),2,3"), util::InputError);
  std::string huge = "1(x1000000)";
  for (int i = 0; i < 300; ++i) huge += ",1(x1000000)";
  try {
    slurm::parse_tasks_per_node(huge);
    ADD_FAILURE() << "no error";
  } catch (const util::InputError& error) {
    EXPECT_NE(std::string(error.what()).find("more than 1000000 nodes"), std::string::npos)
        << error.what();
  }
}

}  // namespace
}  // namespace dlaunch::slurm
