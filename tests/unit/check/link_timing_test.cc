// One link timed by two ranks (threads over loopback): how often each
// direction is timed, decided by the lower rank alone.
#include "check/link_timing.h"

#include <gtest/gtest.h>

#include "../collective/loopback_ranks.h"

namespace dlaunch::check {
namespace {

std::vector<LinkFigure> time_one_link(const LinkTiming& timing, std::size_t bytes) {
  return collective::run_loopback_ranks(2, 2, [=](const collective::WorkerIdentity& identity) {
    auto communicator = collective::connect_gloo(identity, std::chrono::seconds(30));
    std::vector<char> payload(bytes, 'x');
    LinkFigure figure = measure_link(*communicator, payload, 1 - identity.rank, timing);
    // Both ends in step to the last byte: a transfer one end still expected
    // would leave the other's barrier waiting here, and the test timing out.
    communicator->barrier();
    return figure;
  });
}

TEST(LinkTiming, EachDirectionIsTimedAsOftenAsAsked) {
  auto figures = time_one_link(LinkTiming{3, 1e9}, 64 << 10);
  for (const auto& figure : figures) {
    EXPECT_EQ(figure.transfers, 3);
    EXPECT_GT(figure.gbps, 0.0);
  }
}

// A transfer that took long enough ends the timing after one, at both ends.
TEST(LinkTiming, ALongTransferIsNotRepeated) {
  auto figures = time_one_link(LinkTiming{3, 0.0}, 64 << 10);
  for (const auto& figure : figures) {
    EXPECT_EQ(figure.transfers, 1);
    EXPECT_GT(figure.gbps, 0.0);
  }
}

TEST(LinkTiming, GigabitsPerSecond) {
  EXPECT_DOUBLE_EQ(gigabits_per_second(1'000'000'000, 8.0), 1.0);
  EXPECT_DOUBLE_EQ(gigabits_per_second(1000, 0.0), 0.0);
}

}  // namespace
}  // namespace dlaunch::check
