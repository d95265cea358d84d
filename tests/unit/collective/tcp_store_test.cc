// The TCP key-value store gloo rendezvouses through, over loopback.
#include "collective/tcp_store.h"

#include <gtest/gtest.h>

#include <future>
#include <poll.h>
#include <sys/socket.h>

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

// A raw store message, as a stranger writes it.
std::string raw_message(char op, const std::string& key, const std::string& value) {
  std::string out(1, op);
  for (const std::string* field : {&key, &value}) {
    auto length = static_cast<std::uint32_t>(field->size());
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((length >> shift) & 0xff));
    out += *field;
  }
  return out;
}

// Whether the store closed FD (it dropped the stranger) within LIMIT.
bool closed_within(const util::Fd& fd, std::chrono::milliseconds limit) {
  auto deadline = util::Clock::now() + limit;
  char buffer[4096];
  while (util::Clock::now() < deadline) {
    pollfd readable{fd.get(), POLLIN, 0};
    if (::poll(&readable, 1, util::millis_until(deadline)) <= 0) continue;
    ssize_t got = ::recv(fd.get(), buffer, sizeof buffer, 0);
    if (got <= 0) return true;
  }
  return false;
}

const std::string kSecret(32, 'g');

// With a secret (the gate's) the ranks that hold it use the store as ever.
TEST(TcpStore, RanksThatHoldTheSecretUseTheStore) {
  int port = util::pick_free_port("127.0.0.1");
  collective::TcpStoreServer server(port, kSecret);
  collective::TcpStore reader("127.0.0.1", port, std::chrono::seconds(10), kSecret);
  collective::TcpStore writer("127.0.0.1", port, std::chrono::seconds(10), kSecret);
  auto value = std::async(std::launch::async, [&] { return reader.get("gate/outcome"); });
  writer.set("gate/outcome", {'o', 'k'});
  EXPECT_EQ(value.get(), (std::vector<char>{'o', 'k'}));
  EXPECT_TRUE(reader.contains("gate/outcome"));
}

// A local user who finds the gate's listener cannot post a forged outcome:
// a set without the proof, or with a wrong one, is never stored, and the
// stranger is dropped.
TEST(TcpStore, AStrangerWithoutTheSecretCannotSetOrRead) {
  int port = util::pick_free_port("127.0.0.1");
  collective::TcpStoreServer server(port, kSecret);
  util::Fd stranger = util::try_connect_tcp("127.0.0.1", port, util::Clock::now() + std::chrono::seconds(5));
  ASSERT_TRUE(stranger);
  ASSERT_TRUE(util::send_all(stranger.get(), raw_message('S', "gate/outcome", "rank 2 did not arrive"),
                             std::chrono::seconds(5)));
  EXPECT_TRUE(closed_within(stranger, std::chrono::seconds(5)));

  util::Fd guesser = util::try_connect_tcp("127.0.0.1", port, util::Clock::now() + std::chrono::seconds(5));
  ASSERT_TRUE(guesser);
  std::string wrong_proof = raw_message('A', std::string(32, 'n'), std::string(32, 'p'));
  ASSERT_TRUE(util::send_all(guesser.get(), wrong_proof + raw_message('S', "gate/outcome", "forged"),
                             std::chrono::seconds(5)));
  EXPECT_TRUE(closed_within(guesser, std::chrono::seconds(5)));

  collective::TcpStore rank("127.0.0.1", port, std::chrono::seconds(10), kSecret);
  EXPECT_FALSE(rank.contains("gate/outcome"));
  // A client with another secret does not get in either: it gives up at its timeout.
  EXPECT_THROW(collective::TcpStore("127.0.0.1", port, std::chrono::milliseconds(600), std::string(32, 'x')),
               util::SystemError);
}

// A rank that holds the secret is not fooled by something else on the port:
// a listener that cannot prove the secret is not the store.
TEST(TcpStore, ARankRefusesAStoreThatCannotProveTheSecret) {
  int port = util::pick_free_port("127.0.0.1");
  collective::TcpStoreServer impostor(port, std::string(32, 'i'));
  try {
    collective::TcpStore rank("127.0.0.1", port, std::chrono::milliseconds(600), kSecret);
    FAIL() << "took a store without the secret";
  } catch (const util::SystemError& error) {
    EXPECT_NE(std::string(error.what()).find("does not hold the store's secret"), std::string::npos) << error.what();
  }
}

// A connection that never proves itself is dropped within the proof timeout
// (10 s), and one that floods bytes before its proof at once.
TEST(TcpStore, AClientThatFloodsBeforeItsProofIsDropped) {
  int port = util::pick_free_port("127.0.0.1");
  collective::TcpStoreServer server(port, kSecret);
  util::Fd flooder = util::try_connect_tcp("127.0.0.1", port, util::Clock::now() + std::chrono::seconds(5));
  ASSERT_TRUE(flooder);
  util::send_all(flooder.get(), std::string(4096, 'A'), std::chrono::seconds(5));
  EXPECT_TRUE(closed_within(flooder, std::chrono::seconds(5)));
  util::Fd silent = util::try_connect_tcp("127.0.0.1", port, util::Clock::now() + std::chrono::seconds(5));
  ASSERT_TRUE(silent);
  EXPECT_TRUE(closed_within(silent, std::chrono::seconds(15)));
}

// Even without a secret (a plain `dlaunch check`) the store is bounded: a
// value over 16 MiB is refused and its writer dropped, where 16 such
// values of 64 MiB once took the store to 1.1 GiB.
TEST(TcpStore, TheStoreRefusesValuesBeyondItsBound) {
  int port = util::pick_free_port("127.0.0.1");
  collective::TcpStoreServer server(port);
  util::Fd writer = util::try_connect_tcp("127.0.0.1", port, util::Clock::now() + std::chrono::seconds(5));
  ASSERT_TRUE(writer);
  std::string header = raw_message('S', "huge", "").substr(0, 1 + 4 + 4);
  std::uint32_t length = 64u << 20;
  for (int shift = 24; shift >= 0; shift -= 8) header.push_back(static_cast<char>((length >> shift) & 0xff));
  util::send_all(writer.get(), header, std::chrono::seconds(5));
  EXPECT_TRUE(closed_within(writer, std::chrono::seconds(5)));
  collective::TcpStore rank("127.0.0.1", port, std::chrono::seconds(10));
  EXPECT_FALSE(rank.contains("huge"));
}

}  // namespace
}  // namespace dlaunch::collective
