// dlaunch check's bandwidth sweep: the sizes it tries and the bus bandwidth it reports.
#include "check/bandwidth_sweep.h"

#include <gtest/gtest.h>

namespace dlaunch::check {
namespace {

TEST(CheckSweep, SizesDoubleFromMinToMaxInWholeFloats) {
  EXPECT_EQ(sweep_sizes(8, 64), (std::vector<std::uint64_t>{8, 16, 32, 64}));
  EXPECT_EQ(sweep_sizes(8, 100), (std::vector<std::uint64_t>{8, 16, 32, 64}));
  EXPECT_EQ(sweep_sizes(6, 12), (std::vector<std::uint64_t>{4, 12}));
  EXPECT_EQ(sweep_sizes(8, 256ull << 20).size(), 26u);
}

TEST(CheckSweep, BusBandwidthIsTheRingsPerLinkTraffic) {
  EXPECT_DOUBLE_EQ(bus_bandwidth(1.0, 4), 1.5);
  EXPECT_DOUBLE_EQ(bus_bandwidth(1.0, 2), 1.0);
  EXPECT_DOUBLE_EQ(bus_bandwidth(1.0, 1), 0.0);
}

}  // namespace
}  // namespace dlaunch::check
