// The gloo group dlaunch check forms, run as threads over loopback.
#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "check/group_layout.h"
#include "collective/communicator.h"
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

}  // namespace
}  // namespace dlaunch::collective
