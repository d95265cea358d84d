// dlaunch check's node-pair matrix: which link is slowest, and whether its node stands out.
#include "check/pair_bandwidth.h"

#include <gtest/gtest.h>

namespace dlaunch::check {
namespace {

TEST(CheckPairs, FlagsTheSlowNode) {
  PairMatrix matrix;
  matrix.hosts = {"a", "b", "c"};
  matrix.gbps = {{0, 1.0, 0.1}, {1.1, 0, 0.12}, {0.09, 0.11, 0}};
  PairVerdict verdict = judge_pairs(matrix);
  EXPECT_EQ(verdict.slowest_from, "c");
  EXPECT_EQ(verdict.slowest_to, "a");
  EXPECT_DOUBLE_EQ(verdict.slowest_gbps, 0.09);
  EXPECT_EQ(verdict.slowest_node, "c");
  EXPECT_TRUE(verdict.slowest_node_is_outlier);
}

TEST(CheckPairs, EvenLinksFlagNoOutlier) {
  PairMatrix matrix;
  matrix.hosts = {"a", "b", "c"};
  matrix.gbps = {{0, 1.0, 0.95}, {1.02, 0, 0.98}, {0.97, 1.01, 0}};
  EXPECT_FALSE(judge_pairs(matrix).slowest_node_is_outlier);
}

}  // namespace
}  // namespace dlaunch::check
