// The TCP key-value store gloo rendezvouses through, over loopback.
#include "collective/tcp_store.h"

#include <gtest/gtest.h>

#include <future>

#include "util/error.h"
#include "util/ports.h"

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

}  // namespace
}  // namespace dlaunch::collective
