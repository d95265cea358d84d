// The gloo group dlaunch check forms, run as threads over loopback.
#include <gtest/gtest.h>

#include "check/group_layout.h"
#include "collective/communicator.h"
#include "util/error.h"
#include "util/ports.h"

#include "loopback_ranks.h"

namespace dlaunch::collective {
namespace {

using check::describe_ranks_per_host;
using check::gather_layout;
using check::GroupLayout;

// Three ranks as threads of this process, over gloo's TCP transport.
TEST(GlooCommunicator, AllReduceBroadcastAndHostsAcrossRanks) {
  auto results = run_loopback_ranks(3, 3, [](const WorkerIdentity& identity) {
    auto communicator = collective::connect_gloo(identity, std::chrono::seconds(30));
    std::int64_t value = identity.rank;
    communicator->allreduce_sum(&value, 1);
    std::int64_t broadcast = identity.rank == 0 ? 42 : 0;
    communicator->broadcast(&broadcast, 1, 0);
    check::GroupLayout layout = check::gather_layout(*communicator, "host" + std::to_string(identity.rank % 2));
    communicator->barrier();
    return std::make_pair(value + broadcast, check::describe_ranks_per_host(layout));
  });
  for (auto& [sum, hosts] : results) {
    EXPECT_EQ(sum, 0 + 1 + 2 + 42);
    EXPECT_EQ(hosts, "host0=2, host1=1");
  }
}

TEST(GlooCommunicator, TheFirstNamedInterfaceIsUsed) {
  EXPECT_EQ(first_interface(""), "");
  EXPECT_EQ(first_interface("eth0"), "eth0");
  EXPECT_EQ(first_interface("ib0,eth0"), "ib0");
  EXPECT_EQ(first_interface(" ib0 , eth0"), "ib0");
  EXPECT_EQ(first_interface(",eth0"), "");
}

// GLOO_SOCKET_IFNAME=lo,eth0: both ranks bind on lo, the first named.
TEST(GlooCommunicator, BindsOnTheNamedInterface) {
  auto sums = run_loopback_ranks(
      2, 2,
      [](const WorkerIdentity& identity) {
        auto communicator = connect_gloo(identity, std::chrono::seconds(30));
        std::int64_t value = identity.rank + 1;
        communicator->allreduce_sum(&value, 1);
        return value;
      },
      "lo,eth0");
  for (auto sum : sums) EXPECT_EQ(sum, 3);
}

TEST(GlooCommunicator, AnUnknownInterfaceIsNamed) {
  int port = util::pick_free_port("127.0.0.1");
  try {
    connect_gloo(loopback_rank(0, 1, port, "nosuchif0"), std::chrono::seconds(5));
    FAIL() << "connected on an interface that does not exist";
  } catch (const util::SystemError& error) {
    EXPECT_NE(std::string(error.what()).find("interface nosuchif0"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace dlaunch::collective
