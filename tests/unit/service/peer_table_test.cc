// PeerTable: node 0's connections as connections (service/peer_table.h):
// held until proved, a flood bounded without touching a proved launcher,
// the handshake deadline, the refusal log's bound, and closing safely.
#include "service/peer_table.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "util/socket.h"
#include "wire/token.h"

namespace dlaunch::rendezvous {
namespace {

using namespace std::chrono_literals;

// Records what the table tells the loop; greets nobody.
class RecordingHost final : public PeerTableHost {
 public:
  void on_connected(Peer& peer, util::Clock::time_point) override { connected.push_back(&peer); }
  void on_peer_event(Peer& peer, std::uint32_t) override { events.push_back(&peer); }
  void on_closed(Peer& peer) override { closed.push_back(&peer); }
  void log(const std::string& line) override { lines.push_back(line); }

  std::vector<Peer*> connected;
  std::vector<Peer*> events;
  std::vector<Peer*> closed;
  std::vector<std::string> lines;
};

class PeerTableTest : public ::testing::Test {
 protected:
  void make_table(std::size_t max_unproven, std::chrono::milliseconds handshake = 10s) {
    util::Fd listener = util::listen_tcp(0);
    port_ = util::bound_port(listener.get());
    table_ = std::make_unique<PeerTable>(std::move(listener), PeerTableSettings{max_unproven, handshake}, events_,
                                         host_);
  }

  // Connects a client and runs the loop until the table held it.
  Peer& connect() {
    clients_.push_back(util::try_connect_tcp("127.0.0.1", port_, util::Clock::now() + 5s));
    EXPECT_TRUE(clients_.back().valid());
    std::size_t before = host_.connected.size() + host_.closed.size();
    run_until([&] { return host_.connected.size() + host_.closed.size() > before; });
    return *host_.connected.back();
  }

  void run_until(const std::function<bool()>& done) {
    auto deadline = util::Clock::now() + 10s;
    while (!done() && util::Clock::now() < deadline) events_.run_once(100ms);
    ASSERT_TRUE(done()) << "the loop did not get there within 10 s";
  }

  bool closed(const Peer* peer) const {
    return std::find(host_.closed.begin(), host_.closed.end(), peer) != host_.closed.end();
  }

  process::EventLoop events_;
  RecordingHost host_;
  std::unique_ptr<PeerTable> table_;
  int port_ = 0;
  std::vector<util::Fd> clients_;
};

TEST_F(PeerTableTest, ANewConnectionIsHeldUnprovenWithAChallengeOfItsOwn) {
  make_table(4);
  Peer& first = connect();
  Peer& second = connect();
  EXPECT_FALSE(first.authenticated);
  EXPECT_EQ(first.challenge.size(), kChallengeSize);
  EXPECT_NE(first.challenge, second.challenge) << "every connection gets a fresh challenge";
  EXPECT_TRUE(host_.closed.empty());
}

TEST_F(PeerTableTest, AFloodClosesTheOldestUnprovenConnectionOnly) {
  make_table(2);
  Peer& launcher = connect();
  table_->mark_proven(launcher);
  Peer& oldest = connect();
  Peer& newer = connect();
  EXPECT_TRUE(host_.closed.empty()) << "two unproven connections fit";
  connect();
  EXPECT_TRUE(closed(&oldest));
  EXPECT_FALSE(closed(&newer));
  EXPECT_FALSE(closed(&launcher)) << "a launcher that proved itself is never closed for room";
  ASSERT_FALSE(host_.lines.empty());
  EXPECT_NE(host_.lines.back().find("to make room"), std::string::npos) << host_.lines.back();
}

TEST_F(PeerTableTest, AConnectionThatDoesNotProveItselfInTimeIsDropped) {
  make_table(4, 0ms);
  Peer& stranger = connect();
  Peer& launcher = connect();
  table_->mark_proven(launcher);
  auto later = util::Clock::now() + 1ms;
  EXPECT_TRUE(table_->close_if_handshake_overdue(stranger, later));
  EXPECT_FALSE(table_->close_if_handshake_overdue(launcher, later));
  EXPECT_TRUE(closed(&stranger));
  ASSERT_EQ(host_.lines.size(), 1u);
  EXPECT_NE(host_.lines[0].find("did not prove the job's token within 0 ms"), std::string::npos) << host_.lines[0];
}

TEST_F(PeerTableTest, TheRefusalLogGoesQuietAfterABoundAndSaysSo) {
  make_table(4);
  for (int i = 0; i < 500; ++i) table_->log_refusal("refused a stranger");
  ASSERT_EQ(host_.lines.size(), 51u) << "fifty refusals, then one line that says the rest are not logged";
  EXPECT_NE(host_.lines.back().find("further refusals are not logged"), std::string::npos);
}

TEST_F(PeerTableTest, ClosingTwiceTellsTheLoopOnceAndTheVisitSkipsTheClosed) {
  make_table(4);
  Peer& peer = connect();
  Peer& other = connect();
  table_->close(peer);
  table_->close(peer);
  EXPECT_EQ(host_.closed.size(), 1u);
  std::vector<Peer*> visited;
  table_->for_each_open([&](Peer& open) { visited.push_back(&open); });
  EXPECT_EQ(visited, std::vector<Peer*>{&other});
  table_->free_closed();
  table_->for_each_open([&](Peer& open) { EXPECT_EQ(&open, &other); });
}

TEST_F(PeerTableTest, AFrameSentReachesThePeerAndItsBytesWakeTheLoop) {
  make_table(4);
  Peer& peer = connect();
  table_->send_frame(peer, "hello", util::Clock::now());
  char buffer[16] = {};
  ssize_t got = -1;
  for (int i = 0; i < 100 && got <= 0; ++i) {
    got = ::recv(clients_.back().get(), buffer, sizeof buffer, 0);
    if (got <= 0) events_.run_once(10ms);
  }
  ASSERT_EQ(got, 5);
  EXPECT_EQ(std::string(buffer, 5), "hello");
  ASSERT_EQ(::send(clients_.back().get(), "x", 1, MSG_NOSIGNAL), 1);
  run_until([&] { return !host_.events.empty(); });
  EXPECT_EQ(host_.events.front(), &peer);
}

TEST_F(PeerTableTest, APeerThatHungUpIsReportedToTheLoopNotClosedByTheTable) {
  make_table(4);
  Peer& peer = connect();
  clients_.back().reset();
  run_until([&] { return !host_.events.empty(); });
  EXPECT_EQ(host_.events.front(), &peer);
  EXPECT_FALSE(closed(&peer)) << "what a hang-up means is the loop's to decide";
}

}  // namespace
}  // namespace dlaunch::rendezvous
