// The gloo group dlaunch check forms, run as threads over loopback.
#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "check/group_layout.h"
#include "collective/communicator.h"
#include "util/error.h"
#include "util/ports.h"

namespace dlaunch::collective {
namespace {

using check::describe_ranks_per_host;
using check::gather_layout;
using check::GroupLayout;

// Three ranks as threads of this process, over gloo's TCP transport.
TEST(GlooCommunicator, AllReduceBroadcastAndHostsAcrossRanks) {
  const int size = 3;
  int port = util::pick_free_port("127.0.0.1");
  std::vector<std::future<std::pair<std::int64_t, std::string>>> ranks;
  for (int rank = 0; rank < size; ++rank) {
    ranks.push_back(std::async(std::launch::async, [=] {
      collective::WorkerIdentity identity;
      identity.rank = rank;
      identity.world_size = size;
      identity.host = "127.0.0.1";
      identity.master_addr = "127.0.0.1";
      identity.master_port = port;
      auto communicator = collective::connect_gloo(identity, std::chrono::seconds(30));
      std::int64_t value = rank;
      communicator->allreduce_sum(&value, 1);
      std::int64_t broadcast = rank == 0 ? 42 : 0;
      communicator->broadcast(&broadcast, 1, 0);
      check::GroupLayout layout = check::gather_layout(*communicator, "host" + std::to_string(rank % 2));
      communicator->barrier();
      return std::make_pair(value + broadcast, check::describe_ranks_per_host(layout));
    }));
  }
  for (auto& rank : ranks) {
    auto [sum, hosts] = rank.get();
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

WorkerIdentity loopback_rank(int rank, int size, int port, const std::string& ifname) {
  WorkerIdentity identity;
  identity.rank = rank;
  identity.world_size = size;
  identity.host = "127.0.0.1";
  identity.master_addr = "127.0.0.1";
  identity.master_port = port;
  identity.socket_ifname = ifname;
  return identity;
}

// GLOO_SOCKET_IFNAME=lo,eth0: both ranks bind on lo, the first named.
TEST(GlooCommunicator, BindsOnTheNamedInterface) {
  int port = util::pick_free_port("127.0.0.1");
  std::vector<std::future<std::int64_t>> ranks;
  for (int rank = 0; rank < 2; ++rank) {
    ranks.push_back(std::async(std::launch::async, [=] {
      auto communicator = connect_gloo(loopback_rank(rank, 2, port, "lo,eth0"), std::chrono::seconds(30));
      std::int64_t value = rank + 1;
      communicator->allreduce_sum(&value, 1);
      return value;
    }));
  }
  for (auto& rank : ranks) EXPECT_EQ(rank.get(), 3);
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
