// The gloo group dlaunch check forms, run as threads over loopback.
#include <gtest/gtest.h>

#include <tuple>

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

// 12 ranks, each connected to the all-reduce's and the barrier's peers and
// to the rank 6 away: the collectives work, the partners exchange, and a
// rank not connected (3 is none of 0's peers) is refused, not crashed on.
TEST(GlooCommunicator, AGroupOfChosenPairsReducesAndExchanges) {
  const int size = 12;
  auto results = run_loopback_ranks(size, size, [](const WorkerIdentity& identity) {
    const int partner = (identity.rank + 6) % 12;
    auto communicator = connect_gloo_pairs(identity, std::chrono::seconds(30), {partner});
    std::int64_t sum = identity.rank;
    communicator->allreduce_sum(&sum, 1);
    communicator->barrier();
    std::int64_t mine = 100 + identity.rank, theirs = -1;
    if (identity.rank < partner) {
      communicator->send(&mine, sizeof mine, partner);
      communicator->recv(&theirs, sizeof theirs, partner);
    } else {
      communicator->recv(&theirs, sizeof theirs, partner);
      communicator->send(&mine, sizeof mine, partner);
    }
    std::string refused;
    if (identity.rank == 0) {
      try {
        communicator->recv(&theirs, sizeof theirs, 3);
      } catch (const util::SystemError& error) {
        refused = error.what();
      }
      try {
        communicator->broadcast(&mine, 1, 0);
      } catch (const util::SystemError& error) {
        refused += std::string(" | ") + error.what();
      }
    }
    communicator->barrier();
    return std::make_tuple(sum, theirs, refused);
  });
  for (int rank = 0; rank < size; ++rank) {
    auto [sum, theirs, refused] = results[static_cast<std::size_t>(rank)];
    EXPECT_EQ(sum, size * (size - 1) / 2) << "rank " << rank;
    EXPECT_EQ(theirs, 100 + (rank + 6) % size) << "rank " << rank;
    if (rank == 0) {
      EXPECT_NE(refused.find("rank 3 is not connected to rank 0"), std::string::npos) << refused;
      EXPECT_NE(refused.find("broadcast needs every pair"), std::string::npos) << refused;
    }
  }
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
