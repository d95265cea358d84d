// The sealed frames of a rendezvous connection (wire/session.h): only
// the holder of the token, on this connection, in this order, in this
// direction, makes a frame the other end accepts.
#include "wire/session.h"

#include <gtest/gtest.h>

#include "wire/aead.h"
#include "wire/token.h"

namespace dlaunch::rendezvous {
namespace {

const std::string kToken = "0123456789abcdef0123456789abcdef";
const std::string kServiceNonce(kChallengeSize, 's');
const std::string kLauncherNonce(kChallengeSize, 'l');

// The frame ENCODED reads back as.
Frame read(const std::string& encoded) {
  FrameReader reader;
  reader.append(encoded);
  auto frame = reader.next();
  EXPECT_TRUE(frame);
  return *frame;
}

struct Pair {
  Session service{kToken, kServiceNonce, kLauncherNonce, End::kService};
  Session launcher{kToken, kServiceNonce, kLauncherNonce, End::kLauncher};
};

TEST(Session, SealedFramesOpenAtTheOtherEndInBothDirections) {
  Pair ends;
  EXPECT_TRUE(ends.service.sealed());
  Frame world = read(ends.service.frame(MessageType::kWorld, "the world"));
  EXPECT_EQ(world.payload.size(), std::string("the world").size() + kAeadTagSize);
  EXPECT_EQ(ends.launcher.open(world), "the world");
  EXPECT_EQ(ends.service.open(read(ends.launcher.frame(MessageType::kOutcome, "done"))), "done");
  EXPECT_EQ(ends.launcher.open(read(ends.service.frame(MessageType::kHeartbeat, ""))), "");
}

// Confidential: what crosses the wire does not hold the payload, and the
// same payload sealed twice reads differently (each frame its own counter).
TEST(Session, SealedPayloadsAreNotReadableOnTheWire) {
  Pair ends;
  const std::string secret = "train.py:42 in load_checkpoint";
  Frame first = read(ends.service.frame(MessageType::kStacks, secret));
  Frame second = read(ends.service.frame(MessageType::kStacks, secret));
  EXPECT_EQ(first.payload.find("load_checkpoint"), std::string::npos);
  EXPECT_EQ(first.payload.find("train.py"), std::string::npos);
  EXPECT_NE(first.payload, second.payload);
  EXPECT_EQ(ends.launcher.open(first), secret);
  EXPECT_EQ(ends.launcher.open(second), secret);
}

// The first Join is sealed apart from its frame (its nonce travels before
// it): seal() and the three-argument open() make the same seal as frame().
TEST(Session, APayloadSealedApartOpensAtTheOtherEnd) {
  Pair ends;
  std::string sealed = ends.launcher.seal(MessageType::kSealedJoin, "join fields", 2);
  EXPECT_EQ(sealed.find("join fields"), std::string::npos);
  EXPECT_THROW(ends.service.open(MessageType::kSealedJoin, 3, sealed), ProtocolError);
  EXPECT_EQ(ends.service.open(MessageType::kSealedJoin, 2, sealed), "join fields");
  // The next frame follows it in the same count.
  EXPECT_EQ(ends.service.open(read(ends.launcher.frame(MessageType::kHeartbeat, "", 2))), "");
}

TEST(Aead, OpensOnlyUnderTheSameKeyCounterAndAssociatedData) {
  const std::string key(kAeadKeySize, 'k');
  std::string sealed = aead_seal(key, 7, "header", "message");
  EXPECT_EQ(sealed.size(), std::string("message").size() + kAeadTagSize);
  EXPECT_EQ(aead_open(key, 7, "header", sealed), "message");
  EXPECT_FALSE(aead_open(key, 8, "header", sealed));
  EXPECT_FALSE(aead_open(key, 7, "Header", sealed));
  EXPECT_FALSE(aead_open(std::string(kAeadKeySize, 'K'), 7, "header", sealed));
  EXPECT_FALSE(aead_open(key, 7, "header", sealed.substr(1)));
  EXPECT_FALSE(aead_open(key, 7, "header", "short"));
  EXPECT_EQ(aead_open(key, 0, "", aead_seal(key, 0, "", "")), "");
}

TEST(Session, AnAlteredFrameFails) {
  Pair ends;
  Frame frame = read(ends.service.frame(MessageType::kWorld, "4 workers"));
  frame.payload[0] = '9';
  EXPECT_THROW(ends.launcher.open(frame), ProtocolError);
  Frame retyped = read(ends.service.frame(MessageType::kStop, "stop"));
  retyped.type = MessageType::kAbort;  // the tag covers the type too
  EXPECT_THROW(ends.launcher.open(retyped), ProtocolError);
}

// A frame's generation (its sender's round) is sealed too: a stale node 0
// cannot pass an old round's frame off as a new one's, nor the reverse.
TEST(Session, TheGenerationIsCoveredByTheTag) {
  Pair ends;
  Frame frame = read(ends.service.frame(MessageType::kVerdict, "verdict", 3));
  EXPECT_EQ(frame.generation, 3u);
  Frame altered = frame;
  altered.generation = 4;
  EXPECT_THROW(ends.launcher.open(altered), ProtocolError);
  EXPECT_EQ(ends.launcher.open(frame), "verdict");
}

TEST(Session, AReplayedOrReorderedFrameFails) {
  Pair ends;
  Frame first = read(ends.service.frame(MessageType::kHeartbeat, ""));
  Frame second = read(ends.service.frame(MessageType::kStop, "stop"));
  EXPECT_THROW(ends.launcher.open(second), ProtocolError);  // out of order
  EXPECT_EQ(ends.launcher.open(first), "");
  EXPECT_THROW(ends.launcher.open(first), ProtocolError);  // replayed
  EXPECT_EQ(ends.launcher.open(second), "stop");
}

TEST(Session, AFrameReflectedToItsSenderFails) {
  Pair ends;
  Frame own = read(ends.launcher.frame(MessageType::kHeartbeat, ""));
  EXPECT_THROW(ends.launcher.open(own), ProtocolError);
}

TEST(Session, AnotherTokenOrConnectionCannotSealForThisOne) {
  Pair ends;
  Session other_token("another token, same nonces........", kServiceNonce, kLauncherNonce, End::kService);
  EXPECT_THROW(ends.launcher.open(read(other_token.frame(MessageType::kWorld, "w"))), ProtocolError);
  Session other_connection(kToken, std::string(kChallengeSize, 'x'), kLauncherNonce, End::kService);
  EXPECT_THROW(ends.launcher.open(read(other_connection.frame(MessageType::kWorld, "w"))), ProtocolError);
}

TEST(Session, AnUnsealedFrameIsRefusedBySealedEnd) {
  Pair ends;
  EXPECT_THROW(ends.launcher.open(read(encode_frame(MessageType::kWelcome, encode(WelcomeMessage{1000})))),
               ProtocolError);
  EXPECT_THROW(ends.launcher.open(Frame{MessageType::kAbort, "short"}), ProtocolError);
}

TEST(Session, WithoutATokenFramesPassAsTheyAre) {
  Session plain;
  EXPECT_FALSE(plain.sealed());
  std::string encoded = plain.frame(MessageType::kStop, "stop");
  EXPECT_EQ(encoded, encode_frame(MessageType::kStop, "stop"));
  EXPECT_EQ(plain.open(read(encoded)), "stop");
}

TEST(Session, TheJoinProofBindsBothNoncesAndTheJoin) {
  std::string proof = join_proof(kToken, kServiceNonce, kLauncherNonce, "join fields");
  EXPECT_EQ(proof.size(), 32u);
  EXPECT_NE(proof, join_proof(kToken, kServiceNonce, std::string(kChallengeSize, 'm'), "join fields"));
  EXPECT_NE(proof, join_proof(kToken, std::string(kChallengeSize, 't'), kLauncherNonce, "join fields"));
  EXPECT_NE(proof, join_proof(kToken, kServiceNonce, kLauncherNonce, "other fields"));
  EXPECT_NE(proof, join_proof("another token.................", kServiceNonce, kLauncherNonce, "join fields"));
}

}  // namespace
}  // namespace dlaunch::rendezvous
