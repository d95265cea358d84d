// The TCP key-value store gloo rendezvouses through, over loopback.
#include "collective/tcp_store.h"

#include <gtest/gtest.h>

#include <future>

#include "util/error.h"
#include "util/ports.h"
#include "util/socket.h"

namespace dlaunch::collective {
namespace {

TEST(TcpStore, GetWaitsForTheSetAndTimesOutNamingTheKey) {
  int port = util::pick_free_port("127.0.0.1");
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
  } catch (const util::SystemError& error) {
    EXPECT_NE(std::string(error.what()).find("never/set"), std::string::npos);
  }
}

TEST(TcpStore, MissingRankZeroIsNamed) {
  int port = util::pick_free_port("127.0.0.1");
  try {
    collective::TcpStore store("127.0.0.1", port, std::chrono::milliseconds(300));
    FAIL();
  } catch (const util::SystemError& error) {
    EXPECT_NE(std::string(error.what()).find("rank 0"), std::string::npos);
  }
}

// A client that asks and never reads fills its own outbox, not the store's
// thread: the ranks behind it are answered at once (the store used to block
// up to 5 s on each answer such a client did not take).
TEST(TcpStore, AClientThatNeverReadsDelaysNoOther) {
  int port = util::pick_free_port("127.0.0.1");
  collective::TcpStoreServer server(port);
  collective::TcpStore writer("127.0.0.1", port, std::chrono::seconds(10));
  writer.set("big", std::vector<char>(8 << 20, 'x'));
  // Eight asks for 8 MiB each: far more than the socket buffers hold.
  util::Fd stuck = util::try_connect_tcp("127.0.0.1", port, util::Clock::now() + std::chrono::seconds(10));
  ASSERT_TRUE(stuck);
  std::string ask(1, 'G');
  for (std::uint32_t length : {3u, 0u}) {
    for (int shift = 24; shift >= 0; shift -= 8) ask.push_back(static_cast<char>((length >> shift) & 0xff));
    if (length == 3) ask += "big";
  }
  for (int i = 0; i < 8; ++i) ASSERT_TRUE(util::send_all(stuck.get(), ask, std::chrono::seconds(10)));

  // Answered within a timeout shorter than one stalled send used to take.
  collective::TcpStore other("127.0.0.1", port, std::chrono::seconds(3));
  other.set("rank1/address", {'o', 'k'});
  EXPECT_EQ(other.get("rank1/address"), (std::vector<char>{'o', 'k'}));
  EXPECT_TRUE(other.contains("big"));
}

}  // namespace
}  // namespace dlaunch::collective
