// A launcher's link to node 0: every frame sealed both ways (heartbeats too,
// which next() opens and skips), a frame node 0 did not seal refused, sends
// that never block on a node 0 that stops reading, and a backlog that shows
// the stall.
#include "wire/service_link.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.h"
#include "util/fd.h"
#include "wire/aead.h"
#include "wire/protocol.h"
#include "wire/session.h"
#include "wire/token.h"

namespace dlaunch::rendezvous {
namespace {

constexpr char kToken[] = "the-jobs-token";

// A link over one end of a socket pair; the test plays node 0 on the other
// end with the matching service Session.
struct LinkAndNode0 {
  util::Fd node0;
  std::string service_nonce = random_bytes(kChallengeSize);
  std::string launcher_nonce = random_bytes(kChallengeSize);
  Session service{kToken, service_nonce, launcher_nonce, End::kService};
  std::optional<ServiceLink> link;

  explicit LinkAndNode0(bool sealed = true) {
    int ends[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, ends), 0);
    node0.reset(ends[1]);
    Session launcher = sealed ? Session(kToken, service_nonce, launcher_nonce, End::kLauncher) : Session();
    if (!sealed) service = Session();
    link.emplace(PeerConnection(util::Fd(ends[0]), util::Clock::now()), std::move(launcher),
                 "10.0.0.1:29500");
  }

  // Node 0 writes BYTES (the socket pair's buffer takes a few frames at once).
  void node0_writes(const std::string& bytes) {
    ASSERT_EQ(::write(node0.get(), bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  }

  // Every frame node 0 has received so far, as read off the wire.
  std::vector<Frame> node0_reads() {
    char buffer[65536];
    ssize_t got;
    while ((got = ::recv(node0.get(), buffer, sizeof(buffer), MSG_DONTWAIT)) > 0)
      reader.append(std::string_view(buffer, static_cast<std::size_t>(got)));
    std::vector<Frame> frames;
    while (auto frame = reader.next()) frames.push_back(std::move(*frame));
    return frames;
  }

  FrameReader reader;
};

TEST(ServiceLink, FramesToNode0AreSealed) {
  LinkAndNode0 both;
  EXPECT_EQ(both.link->address(), "10.0.0.1:29500");
  ASSERT_TRUE(both.link->send(MessageType::kOutcome, "first"));
  ASSERT_TRUE(both.link->send(MessageType::kFailure, "second"));
  EXPECT_FALSE(both.link->has_backlog());
  auto frames = both.node0_reads();
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0].type, MessageType::kOutcome);
  // On the wire: the payload and its tag.
  EXPECT_EQ(frames[0].payload.size(), std::string("first").size() + kAeadTagSize);
  EXPECT_EQ(both.service.open(frames[0]), "first");
  EXPECT_EQ(frames[1].type, MessageType::kFailure);
  EXPECT_EQ(both.service.open(frames[1]), "second");
}

TEST(ServiceLink, FramesFromNode0AreOpenedAndHeartbeatsSkipped) {
  LinkAndNode0 both;
  // Sealed one after another (the tags count frames).
  std::string frames = both.service.frame(MessageType::kHeartbeat, "");
  frames += both.service.frame(MessageType::kStop, "stop now");
  frames += both.service.frame(MessageType::kHeartbeat, "");
  both.node0_writes(frames);
  util::Clock::time_point before = util::Clock::now();
  ASSERT_TRUE(both.link->receive());
  EXPECT_GE(both.link->last_heard(), before);
  // The heartbeat before the Stop was opened too, or the Stop's counter would not match.
  auto stop = both.link->next();
  ASSERT_TRUE(stop);
  EXPECT_EQ(stop->type, MessageType::kStop);
  EXPECT_EQ(stop->payload, "stop now");
  EXPECT_EQ(both.link->next(), std::nullopt);  // the last heartbeat only
  EXPECT_FALSE(both.link->mid_frame());
}

TEST(ServiceLink, AFrameNode0DidNotSealIsAProtocolError) {
  LinkAndNode0 both;
  // A stranger on the path, without the token, sends a plain Stop.
  both.node0_writes(encode_frame(MessageType::kStop, "stop now"));
  ASSERT_TRUE(both.link->receive());
  EXPECT_THROW(both.link->next(), util::ProtocolError);
}

TEST(ServiceLink, AFrameSealedWithAnotherTokenIsAProtocolError) {
  LinkAndNode0 both;
  Session other("another-token", both.service_nonce, both.launcher_nonce, End::kService);
  both.node0_writes(other.frame(MessageType::kVerdict, "restart"));
  ASSERT_TRUE(both.link->receive());
  EXPECT_THROW(both.link->next(), util::ProtocolError);
}

TEST(ServiceLink, AReplayedFrameIsAProtocolError) {
  LinkAndNode0 both;
  std::string stop = both.service.frame(MessageType::kStop, "stop now");
  both.node0_writes(stop + stop);
  ASSERT_TRUE(both.link->receive());
  ASSERT_TRUE(both.link->next());
  EXPECT_THROW(both.link->next(), util::ProtocolError);
}

TEST(ServiceLink, AHeartbeatWithAPayloadIsAProtocolError) {
  LinkAndNode0 both;
  both.node0_writes(both.service.frame(MessageType::kHeartbeat, "unexpected"));
  ASSERT_TRUE(both.link->receive());
  EXPECT_THROW(both.link->next(), util::ProtocolError);
}

TEST(ServiceLink, AHeaderAnnouncingMoreThanTheLimitIsAProtocolError) {
  LinkAndNode0 both;
  std::string header = encode_frame(MessageType::kWorld, "").substr(0, kHeaderSize - 4);
  std::uint32_t too_long = kMaxPayload + 1;
  for (int shift = 24; shift >= 0; shift -= 8) header += static_cast<char>((too_long >> shift) & 0xff);
  both.node0_writes(header);
  ASSERT_TRUE(both.link->receive());
  EXPECT_THROW(both.link->next(), util::ProtocolError);
}

TEST(ServiceLink, WithoutATokenFramesPassAsTheyAre) {
  LinkAndNode0 both(/*sealed=*/false);
  ASSERT_TRUE(both.link->send(MessageType::kOutcome, "plain"));
  auto frames = both.node0_reads();
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].payload, "plain");
  both.node0_writes(encode_frame(MessageType::kStop, "stop now"));
  ASSERT_TRUE(both.link->receive());
  auto stop = both.link->next();
  ASSERT_TRUE(stop);
  EXPECT_EQ(stop->payload, "stop now");
}

TEST(ServiceLink, SendsNeverBlockOnANode0ThatDoesNotRead) {
  LinkAndNode0 both;
  // Far more than the socket pair buffers: the rest waits in the outbox.
  const std::string payload(512 * 1024, 'p');
  constexpr int kFrames = 8;
  util::Clock::time_point before = util::Clock::now();
  for (int i = 0; i < kFrames; ++i) ASSERT_TRUE(both.link->send(MessageType::kOutcome, payload));
  ASSERT_TRUE(both.link->has_backlog());
  EXPECT_GE(both.link->last_sent(), before);
  util::Clock::time_point since = both.link->backlog_since();
  EXPECT_GE(since, before);
  // Node 0 still does not read: flushing moves nothing, and the stall clock stands.
  ASSERT_TRUE(both.link->flush());
  EXPECT_TRUE(both.link->has_backlog());
  EXPECT_EQ(both.link->backlog_since(), since);

  // Once node 0 reads, everything arrives, whole, in order, its tags in step.
  std::vector<Frame> frames;
  while (both.link->has_backlog()) {
    for (auto& frame : both.node0_reads()) frames.push_back(std::move(frame));
    ASSERT_TRUE(both.link->flush());
  }
  for (auto& frame : both.node0_reads()) frames.push_back(std::move(frame));
  ASSERT_EQ(frames.size(), static_cast<std::size_t>(kFrames));
  for (const auto& frame : frames) EXPECT_EQ(both.service.open(frame), payload);
}

TEST(ServiceLink, AClosedNode0EndsTheLink) {
  LinkAndNode0 both;
  both.node0.reset();
  EXPECT_FALSE(both.link->receive());
  EXPECT_FALSE(both.link->send(MessageType::kOutcome, "nobody hears this"));  // and no SIGPIPE
}

}  // namespace
}  // namespace dlaunch::rendezvous
