// dlaunch check: the pure parts, and the gloo group run as threads over loopback.
#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "check/bandwidth_sweep.h"
#include "check/check_options.h"
#include "check/group_layout.h"
#include "check/pair_bandwidth.h"
#include "collective/communicator.h"
#include "collective/tcp_store.h"
#include "util/error.h"
#include "util/ports.h"

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

TEST(CheckOptions, DefaultsAndBounds) {
  auto defaults = parse_check_options({});
  ASSERT_TRUE(defaults);
  EXPECT_FALSE(defaults->bench);
  EXPECT_EQ(defaults->min_bytes, 8u);
  EXPECT_EQ(defaults->max_bytes, 256ull << 20);
  EXPECT_EQ(defaults->timeout, std::chrono::seconds(120));
  auto bench = parse_check_options({"--bench", "--json", "--max-bytes", "1024", "--timeout", "5",
                                    "--inject-wrong-rank", "2"});
  EXPECT_TRUE(bench->bench && bench->json);
  EXPECT_EQ(bench->max_bytes, 1024u);
  EXPECT_EQ(bench->inject_wrong_rank, 2);
  EXPECT_THROW(parse_check_options({"--min-bytes", "64", "--max-bytes", "8"}), UsageError);
  EXPECT_THROW(parse_check_options({"--iters", "0"}), UsageError);
  EXPECT_THROW(parse_check_options({"--bogus"}), UsageError);
}

// CLI11 reads "-1" into an unsigned integer as 2^64-1; the byte counts are
// read by dlaunch instead, which names the option and the value as typed.
TEST(CheckOptions, NegativeOrMalformedByteCountsAreRefusedAsTyped) {
  auto message_of = [](std::vector<std::string> args) -> std::string {
    try {
      parse_check_options(args);
    } catch (const InputError& error) {
      return error.what();
    }
    return "no error";
  };
  std::string message = message_of({"--min-bytes", "-1"});
  EXPECT_NE(message.find("--min-bytes (bytes) must be an integer from 4 to 1099511627776, got '-1'"),
            std::string::npos)
      << message;
  EXPECT_EQ(message.find("18446744073709551615"), std::string::npos) << message;
  EXPECT_NE(message_of({"--max-bytes=-8"}).find("--max-bytes (bytes)"), std::string::npos);
  EXPECT_NE(message_of({"--pair-bytes", "0"}).find("--pair-bytes (bytes)"), std::string::npos);
  EXPECT_NE(message_of({"--max-bytes", "64M"}).find("got '64M'"), std::string::npos);
  EXPECT_NE(message_of({"--max-bytes", "99999999999999999999"}).find("got '99999999999999999999'"),
            std::string::npos);
  // Beyond 1 TiB the sweep's doubling would run towards 2^64.
  EXPECT_NE(message_of({"--max-bytes", "18446744073709551615"}).find("--max-bytes"), std::string::npos);
  auto largest = parse_check_options({"--min-bytes", "1099511627776", "--max-bytes", "1099511627776",
                                      "--pair-bytes", "1"});
  ASSERT_TRUE(largest);
  EXPECT_EQ(largest->max_bytes, 1ull << 40);
  EXPECT_EQ(largest->pair_bytes, 1u);
}

TEST(TcpStore, GetWaitsForTheSetAndTimesOutNamingTheKey) {
  int port = pick_free_port("127.0.0.1");
  collective::TcpStoreServer server(port);
  collective::TcpStore reader("127.0.0.1", port, std::chrono::seconds(10));
  collective::TcpStore writer("127.0.0.1", port, std::chrono::seconds(10));
  auto value = std::async(std::launch::async, [&] { return reader.get("rank1/address"); });
  writer.set("rank1/address", {'h', 'i'});
  EXPECT_EQ(value.get(), (std::vector<char>{'h', 'i'}));

  collective::TcpStore impatient("127.0.0.1", port, std::chrono::milliseconds(200));
  try {
    impatient.wait({"never/set"});
    FAIL();
  } catch (const SystemError& error) {
    EXPECT_NE(std::string(error.what()).find("never/set"), std::string::npos);
  }
}

TEST(TcpStore, MissingRankZeroIsNamed) {
  int port = pick_free_port("127.0.0.1");
  try {
    collective::TcpStore store("127.0.0.1", port, std::chrono::milliseconds(300));
    FAIL();
  } catch (const SystemError& error) {
    EXPECT_NE(std::string(error.what()).find("rank 0"), std::string::npos);
  }
}

// Three ranks as threads of this process, over gloo's TCP transport.
TEST(GlooCommunicator, AllReduceBroadcastAndHostsAcrossRanks) {
  const int size = 3;
  int port = pick_free_port("127.0.0.1");
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
      GroupLayout layout = gather_layout(*communicator, "host" + std::to_string(rank % 2));
      communicator->barrier();
      return std::make_pair(value + broadcast, describe_ranks_per_host(layout));
    }));
  }
  for (auto& rank : ranks) {
    auto [sum, hosts] = rank.get();
    EXPECT_EQ(sum, 0 + 1 + 2 + 42);
    EXPECT_EQ(hosts, "host0=2, host1=1");
  }
}

}  // namespace
}  // namespace dlaunch::check
