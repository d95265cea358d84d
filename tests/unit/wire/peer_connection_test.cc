// One rendezvous connection: whole frames in, an outbox for what the peer
// does not take at once, and a bounded frame size until the peer proved
// itself.
#include "wire/peer_connection.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "util/error.h"
#include "util/socket.h"

namespace dlaunch::rendezvous {
namespace {

using std::chrono::seconds;

// Both ends of a connected, non-blocking stream socket pair.
struct SocketPair {
  util::Fd here;
  util::Fd there;
  SocketPair() {
    int ends[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, ends), 0);
    here.reset(ends[0]);
    there.reset(ends[1]);
  }
};

std::string read_all(int fd) {
  std::string bytes;
  char buffer[65536];
  ssize_t got;
  while ((got = ::recv(fd, buffer, sizeof(buffer), MSG_DONTWAIT)) > 0)
    bytes.append(buffer, static_cast<std::size_t>(got));
  return bytes;
}

TEST(PeerConnection, FramesArriveWholeEvenInPieces) {
  SocketPair pair;
  util::Clock::time_point start = util::Clock::now();
  PeerConnection connection(std::move(pair.here), start);
  EXPECT_EQ(connection.connected_at(), start);
  EXPECT_EQ(connection.last_heard(), start);

  std::string frames = encode_frame(MessageType::kHeartbeat, "") + encode_frame(MessageType::kStop, "why");
  ASSERT_EQ(::write(pair.there.get(), frames.data(), 5), 5);
  ASSERT_TRUE(connection.receive(start + seconds(1)));
  EXPECT_EQ(connection.last_heard(), start + seconds(1));
  EXPECT_EQ(connection.next_frame(), std::nullopt);
  EXPECT_TRUE(connection.mid_frame());

  ASSERT_EQ(::write(pair.there.get(), frames.data() + 5, frames.size() - 5),
            static_cast<ssize_t>(frames.size() - 5));
  ASSERT_TRUE(connection.receive(start + seconds(2)));
  auto heartbeat = connection.next_frame();
  ASSERT_TRUE(heartbeat);
  EXPECT_EQ(heartbeat->type, MessageType::kHeartbeat);
  auto stop = connection.next_frame();
  ASSERT_TRUE(stop);
  EXPECT_EQ(stop->type, MessageType::kStop);
  EXPECT_EQ(stop->payload, "why");
  EXPECT_EQ(connection.next_frame(), std::nullopt);
  EXPECT_FALSE(connection.mid_frame());

  // Nothing new: still connected, and the peer was not heard again.
  EXPECT_TRUE(connection.receive(start + seconds(3)));
  EXPECT_EQ(connection.last_heard(), start + seconds(2));
}

TEST(PeerConnection, AClosedPeerEndsTheConnection) {
  SocketPair pair;
  PeerConnection connection(std::move(pair.here), util::Clock::now());
  pair.there.reset();
  EXPECT_FALSE(connection.receive(util::Clock::now()));
  EXPECT_FALSE(connection.send(encode_frame(MessageType::kHeartbeat, ""), util::Clock::now()));  // no SIGPIPE
}

TEST(PeerConnection, WhatThePeerDoesNotTakeWaitsInTheOutbox) {
  SocketPair pair;
  util::Clock::time_point start = util::Clock::now();
  PeerConnection connection(std::move(pair.here), start);
  std::string frame = encode_frame(MessageType::kAbort, std::string(60000, 'x'));
  std::size_t queued = 0;
  for (int i = 0; i < 100 && !connection.has_backlog(); ++i) {
    ASSERT_TRUE(connection.send(frame, start));  // never blocks
    queued += frame.size();
  }
  ASSERT_TRUE(connection.has_backlog());
  EXPECT_EQ(connection.backlog_since(), start);
  // Later sends queue behind, and the stall still counts from the start.
  ASSERT_TRUE(connection.send(frame, start + seconds(5)));
  queued += frame.size();
  EXPECT_TRUE(connection.flush(start + seconds(6)));
  EXPECT_EQ(connection.backlog_since(), start);

  // The peer reads: the clock restarts, and in the end every byte arrived in order.
  std::string received = read_all(pair.there.get());
  EXPECT_TRUE(connection.flush(start + seconds(7)));
  if (connection.has_backlog()) {
    EXPECT_EQ(connection.backlog_since(), start + seconds(7));
  }
  for (int i = 0; i < 1000 && connection.has_backlog(); ++i) {
    received += read_all(pair.there.get());
    ASSERT_TRUE(connection.flush(start + seconds(8)));
  }
  received += read_all(pair.there.get());
  EXPECT_FALSE(connection.has_backlog());
  ASSERT_EQ(received.size(), queued);
  FrameReader reader;
  reader.append(received);
  for (std::size_t i = 0; i < queued / frame.size(); ++i) {
    auto next = reader.next();
    ASSERT_TRUE(next) << i;
    EXPECT_EQ(next->payload, std::string(60000, 'x'));
  }
}

TEST(PeerConnection, ATooLongFrameIsRefusedAsSoonAsItsHeaderArrives) {
  SocketPair pair;
  PeerConnection connection(std::move(pair.here), util::Clock::now());
  connection.set_max_payload(kMaxHandshakePayload);
  std::string header = encode_frame(MessageType::kJoin, std::string(kMaxHandshakePayload + 1, 'j')).substr(0, kHeaderSize);
  ASSERT_EQ(::write(pair.there.get(), header.data(), header.size()), static_cast<ssize_t>(header.size()));
  ASSERT_TRUE(connection.receive(util::Clock::now()));
  EXPECT_THROW(connection.next_frame(), ProtocolError);
}

TEST(PeerConnection, TheAddressIsThePeers) {
  util::Fd listener = util::listen_tcp(0);
  int port = util::bound_port(listener.get());
  util::Fd client = util::try_connect_tcp("127.0.0.1", port, util::Clock::now() + seconds(5));
  ASSERT_TRUE(client.valid());
  util::Fd accepted(::accept4(listener.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
  ASSERT_TRUE(accepted.valid());
  sockaddr_in local{};
  socklen_t size = sizeof(local);
  ASSERT_EQ(::getsockname(client.get(), reinterpret_cast<sockaddr*>(&local), &size), 0);
  PeerConnection connection(std::move(accepted), util::Clock::now());
  EXPECT_EQ(connection.address(), "127.0.0.1:" + std::to_string(ntohs(local.sin_port)));
}

}  // namespace
}  // namespace dlaunch::rendezvous
