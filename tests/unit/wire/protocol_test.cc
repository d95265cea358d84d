// The rendezvous wire format: round trips, framing, refusals.
#include "wire/protocol.h"

#include "wire/token.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace dlaunch::rendezvous {
namespace {

JoinMessage sample_join() {
  JoinMessage join;
  join.run_id = "job-1";
  join.round = 2;
  join.node_rank = 3;
  join.nnodes = 4;
  join.nproc = 8;
  join.host = "node07";
  join.dlaunch_version = "1.2.3";
  join.allow_uneven = true;
  join.preflight_error = "no program";
  join.nonce = std::string(kChallengeSize, '\x05');
  join.proof = std::string(32, '\x07');
  return join;
}

TEST(Protocol, JoinRoundTrips) {
  JoinMessage join = sample_join();
  auto decoded = decode_join(encode(join));
  EXPECT_EQ(decoded.dlaunch_version, "1.2.3");
  EXPECT_TRUE(decoded.allow_uneven);
  EXPECT_EQ(decoded.preflight_error, "no program");
  EXPECT_EQ(decoded.proof, join.proof);
  EXPECT_EQ(decoded.nonce, join.nonce);
  EXPECT_EQ(signed_part(decoded), signed_part(join));
  EXPECT_EQ(decoded.run_id, "job-1");
  EXPECT_EQ(decoded.round, 2u);
  EXPECT_EQ(decoded.node_rank, 3u);
  EXPECT_EQ(decoded.nnodes, 4u);
  EXPECT_EQ(decoded.nproc, 8u);
  EXPECT_EQ(decoded.host, "node07");
}

TEST(Protocol, JoinCarriesTheSpareCountAndMinNodesSigned) {
  JoinMessage join = sample_join();
  join.node_rank = 5;  // a spare's slot: past the training size
  join.spare_nodes = 2;
  join.min_nodes = 3;
  auto decoded = decode_join(encode(join));
  EXPECT_EQ(decoded.node_rank, 5u);
  EXPECT_EQ(decoded.spare_nodes, 2u);
  EXPECT_EQ(decoded.min_nodes, 3u);
  // Both are in the signed part, so a peer cannot change them unnoticed.
  JoinMessage other_spares = join;
  other_spares.spare_nodes = 1;
  EXPECT_NE(signed_part(other_spares), signed_part(join));
  JoinMessage other_minimum = join;
  other_minimum.min_nodes = 4;
  EXPECT_NE(signed_part(other_minimum), signed_part(join));
}

TEST(Protocol, WorldRoundTrips) {
  World world;
  world.round = 1;
  world.nproc_per_node = {2, 3};
  world.worker_master_addr = "a";
  world.worker_master_port = 31337;
  world.run_id = "r";
  World decoded = decode_world(encode(world));
  EXPECT_EQ(decoded.nproc_per_node, world.nproc_per_node);
  EXPECT_EQ(decoded.worker_master_port, 31337);
  EXPECT_EQ(decoded.world_size(), 5);
  EXPECT_EQ(decoded.rank_offset(1), 2);
}

TEST(Protocol, WorldSlotsRoundTripInTheirOrder) {
  World world;
  world.round = 2;
  world.nproc_per_node = {8, 8, 8, 8, 8};
  world.node_slots = {0, 3, 1, 2, 7};  // node ranks given anew: not one run
  world.spare_slots = {4, 5};
  world.benched_slots = {6};
  world.addresses = {"10.0.0.1", "", "fe80::1", "10.0.0.4", "h5", "h6", "h7", "h8"};
  world.worker_master_addr = "a";
  world.worker_master_port = 29500;
  world.run_id = "r";
  World decoded = decode_world(encode(world));
  EXPECT_EQ(decoded.node_slots, world.node_slots);
  EXPECT_EQ(decoded.spare_slots, world.spare_slots);
  EXPECT_EQ(decoded.benched_slots, world.benched_slots);
  EXPECT_EQ(decoded.addresses, world.addresses);
  EXPECT_EQ(decoded.node_rank_of(7), 4);
  EXPECT_EQ(decoded.node_rank_of(4), std::nullopt);
  EXPECT_EQ(decoded.nproc_per_node, world.nproc_per_node);
}

std::string big_endian(std::uint32_t value) {
  return {static_cast<char>(value >> 24), static_cast<char>(value >> 16), static_cast<char>(value >> 8),
          static_cast<char>(value)};
}

// An encoded World whose benched slots are the runs (start, count) given,
// written by hand: the benched slots are the World's last list but one (the
// addresses, here none, come last).
std::string world_with_benched_runs(const std::vector<std::pair<std::uint32_t, std::uint32_t>>& runs) {
  World world;
  world.nproc_per_node = {1};
  world.node_slots = {0};
  world.worker_master_addr = "a";
  world.run_id = "r";
  std::string payload = encode(world);
  // The benched slots', addresses', interface names' and interface
  // addresses' empty lists: counts of 0.
  payload.resize(payload.size() - 16);
  payload += big_endian(static_cast<std::uint32_t>(runs.size()));
  for (const auto& [start, count] : runs) payload += big_endian(start) + big_endian(count);
  return payload + big_endian(0) + big_endian(0) + big_endian(0);
}

TEST(Protocol, MalformedSlotRunsAreRefused) {
  EXPECT_EQ(decode_world(world_with_benched_runs({{1, 2}})).benched_slots, (std::vector<int>{1, 2}));
  EXPECT_EQ(decode_world(world_with_benched_runs({{65535, 1}})).benched_slots, (std::vector<int>{65535}));
  try {
    decode_world(world_with_benched_runs({{3, 0}}));
    FAIL() << "a run of no slots was accepted";
  } catch (const ProtocolError& error) {
    EXPECT_NE(std::string(error.what()).find("slot run"), std::string::npos) << error.what();
  }
  EXPECT_THROW(decode_world(world_with_benched_runs({{65535, 2}})), ProtocolError);  // past 65536
  EXPECT_THROW(decode_world(world_with_benched_runs({{65536, 1}})), ProtocolError);
  EXPECT_THROW(decode_world(world_with_benched_runs({{0xffffffffu, 1}})), ProtocolError);  // wraps
  EXPECT_THROW(decode_world(world_with_benched_runs({{1, 0xffffffffu}})), ProtocolError);
  // Each run in range, but together more slots than a list may hold.
  EXPECT_THROW(decode_world(world_with_benched_runs({{0, 65536}, {0, 1}})), ProtocolError);
}

TEST(Protocol, ChallengeRoundTripsAndChecksItsSize) {
  ChallengeMessage challenge{std::string(kChallengeSize, 'n'), true, 30000};
  auto decoded = decode_challenge(encode(challenge));
  EXPECT_EQ(decoded.nonce, challenge.nonce);
  EXPECT_TRUE(decoded.token_required);
  EXPECT_EQ(decoded.heartbeat_timeout_ms, 30000u);
  EXPECT_THROW(decode_challenge(encode(ChallengeMessage{"short", false, 0})), ProtocolError);
  EXPECT_NO_THROW(decode_heartbeat(""));
  EXPECT_THROW(decode_heartbeat("x"), ProtocolError);
}

TEST(Protocol, WelcomeRoundTripsAndAJoinNeedsAWholeNonce) {
  EXPECT_EQ(decode_welcome(encode(WelcomeMessage{4500})).heartbeat_timeout_ms, 4500u);
  EXPECT_EQ(decode_welcome(encode(WelcomeMessage{4500, 7})).slot, 7u) << "the slot a Join for any slot was given";
  EXPECT_THROW(decode_welcome("\x01"), ProtocolError);
  JoinMessage join = sample_join();
  join.nonce = "short";
  EXPECT_THROW(decode_join(encode(join)), ProtocolError);
}

TEST(Protocol, AReaderRefusesAHeaderOverItsLimitBeforeThePayloadArrives) {
  FrameReader reader;
  reader.set_max_payload(kMaxHandshakePayload);
  std::string header = encode_frame(MessageType::kJoin, std::string(kMaxHandshakePayload + 1, 'j'));
  reader.append(header.substr(0, kHeaderSize));  // only the header: the payload never comes
  EXPECT_THROW(reader.next(), ProtocolError);
  FrameReader at_limit;
  at_limit.set_max_payload(kMaxHandshakePayload);
  at_limit.append(encode_frame(MessageType::kJoin, std::string(kMaxHandshakePayload, 'j')));
  EXPECT_TRUE(at_limit.next());
}

TEST(Protocol, UniformWorldStaysSmallForThousandsOfNodes) {
  World world;
  world.nproc_per_node.assign(4096, 8);
  world.worker_master_addr = "node0001";
  world.run_id = "job";
  std::string payload = encode(world);
  EXPECT_LT(payload.size(), 100u);
  World decoded = decode_world(payload);
  EXPECT_EQ(decoded.nproc_per_node, world.nproc_per_node);
  EXPECT_EQ(decoded.world_size(), 4096 * 8);
}

TEST(Protocol, VerdictWithFailureRoundTrips) {
  Failure failure;
  failure.global_rank = 5;
  failure.local_rank = 1;
  failure.node_rank = 2;
  failure.host = "h";
  failure.pid = 1234;
  failure.exit_code = 137;
  failure.signal = 9;
  failure.last_lines = {"one", "two"};
  Verdict failed;
  failed.kind = Verdict::Kind::kFailed;
  failed.exit_code = 137;
  failed.failure = failure;
  VerdictMessage message{3, failed};
  auto decoded = decode_verdict(encode(message));
  EXPECT_EQ(decoded.round, 3u);
  EXPECT_EQ(decoded.verdict.kind, Verdict::Kind::kFailed);
  EXPECT_EQ(decoded.verdict.exit_code, 137);
  ASSERT_TRUE(decoded.verdict.failure);
  EXPECT_EQ(decoded.verdict.failure->global_rank, 5);
  EXPECT_EQ(decoded.verdict.failure->signal, 9);
  EXPECT_EQ(decoded.verdict.failure->last_lines, failure.last_lines);
}

TEST(Protocol, VerdictCarriesWhyItDidNotRestartAndTheTimeline) {
  Verdict failed;
  failed.kind = Verdict::Kind::kFailed;
  failed.exit_code = 1;
  failed.not_restarted = "no spare left: 1 node remains, and the job needs at least 2 (--min-nodes)";
  failed.timeline = {"2026-12-03T10:00:00 lost contact with the launcher of node02",
                     "2026-12-03T10:00:05 round 1: node04 (spare) takes node rank 1; restart 1/3", ""};
  failed.consequences = 3;
  auto decoded = decode_verdict(encode(VerdictMessage{1, failed}));
  EXPECT_EQ(decoded.verdict.consequences, 3);
  EXPECT_EQ(decoded.verdict.not_restarted, failed.not_restarted);
  EXPECT_EQ(decoded.verdict.timeline, failed.timeline);
  EXPECT_FALSE(decoded.verdict.failure);
  auto plain = decode_verdict(encode(VerdictMessage{0, Verdict{}}));
  EXPECT_TRUE(plain.verdict.not_restarted.empty());
  EXPECT_TRUE(plain.verdict.timeline.empty());
}

TEST(Protocol, OutcomeCarriesThePreemptionWarning) {
  NodeOutcome outcome;
  outcome.stop_signal = 15;
  outcome.preempted = true;
  outcome.consequences = 7;
  auto decoded = decode_outcome(encode(OutcomeMessage{4, outcome}));
  EXPECT_EQ(decoded.outcome.consequences, 7);
  EXPECT_EQ(decoded.round, 4u);
  EXPECT_EQ(decoded.outcome.stop_signal, 15);
  EXPECT_TRUE(decoded.outcome.preempted);
  EXPECT_FALSE(decoded.outcome.failure);
  EXPECT_FALSE(decoded.outcome.top_step);
}

TEST(Protocol, OutcomeCarriesTheNodesHighestStepWithinBounds) {
  NodeOutcome outcome;
  outcome.top_step = 5'000'000'123;  // past 32 bits
  EXPECT_EQ(decode_outcome(encode(OutcomeMessage{1, outcome})).outcome.top_step, 5'000'000'123);
  outcome.top_step = -1;
  EXPECT_THROW(decode_outcome(encode(OutcomeMessage{1, outcome})), ProtocolError);
  outcome.top_step = kMostSteps + 1;
  EXPECT_THROW(decode_outcome(encode(OutcomeMessage{1, outcome})), ProtocolError);
}

TEST(Protocol, FramesArriveInPieces) {
  std::string wire = encode_frame(MessageType::kStop, encode(TextMessage{1, "stop now"})) +
                     encode_frame(MessageType::kAbort, encode(TextMessage{1, "abort"}));
  FrameReader reader;
  std::vector<Frame> frames;
  for (char byte : wire) {
    reader.append(std::string_view(&byte, 1));
    while (auto frame = reader.next()) frames.push_back(*frame);
  }
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0].type, MessageType::kStop);
  EXPECT_EQ(decode_text(frames[0].payload).reason, "stop now");
  EXPECT_EQ(frames[1].type, MessageType::kAbort);
}

TEST(Protocol, RefusesStrangers) {
  FrameReader garbage;
  garbage.append("GET / HTTP/1.1\r\n\r\n");
  EXPECT_THROW(garbage.next(), ProtocolError);

  std::string frame = encode_frame(MessageType::kJoin, "");
  frame[5] = static_cast<char>(kVersion + 1);  // another protocol version
  FrameReader other_version;
  other_version.append(frame);
  try {
    other_version.next();
    FAIL();
  } catch (const ProtocolError& error) {
    EXPECT_NE(std::string(error.what()).find("version"), std::string::npos);
  }

  std::string huge = encode_frame(MessageType::kJoin, "");
  huge[kHeaderSize - 4] = '\x7f';  // a length far over the cap
  FrameReader too_long;
  too_long.append(huge);
  EXPECT_THROW(too_long.next(), ProtocolError);
}

TEST(Protocol, TruncatedOrPaddedPayloadsAreRejected) {
  JoinMessage join = sample_join();
  join.proof.clear();
  std::string payload = encode(join);
  EXPECT_THROW(decode_join(payload.substr(0, payload.size() - 1)), ProtocolError);
  EXPECT_THROW(decode_join(payload + "x"), ProtocolError);
  std::string lying_length = payload;
  lying_length[3] = '\x50';  // proof length larger than the payload
  EXPECT_THROW(decode_join(lying_length), ProtocolError);
}

TEST(Protocol, AnObserversJoinSaysSoAndItsProofCoversTheFlag) {
  JoinMessage join = sample_join();
  join.observer = true;
  EXPECT_TRUE(decode_join(encode(join)).observer);
  JoinMessage launcher = join;
  launcher.observer = false;
  EXPECT_NE(signed_part(join), signed_part(launcher));  // a launcher's proof cannot be reused as an observer's
}

TEST(Protocol, ProgressCarriesIdleTimeAndBoundedSteps) {
  ProgressMessage progress;
  progress.round = 3;
  progress.idle_ms = 4'000'000'000U;
  progress.steps = {{0, 0}, {1, 1LL << 39}, {2, kMostSteps}};
  auto decoded = decode_progress(encode(progress));
  EXPECT_EQ(decoded.round, 3u);
  EXPECT_EQ(decoded.idle_ms, 4'000'000'000U);
  EXPECT_EQ(decoded.steps, progress.steps);
  std::string truncated = encode(progress);
  truncated.pop_back();
  EXPECT_THROW(decode_progress(truncated), ProtocolError);
  // A step out of bounds (9e18, INT64_MIN, negative) is a broken report,
  // never a median's input.
  for (std::int64_t wild : {std::int64_t{9'000'000'000'000'000'000}, INT64_MIN, std::int64_t{-5}, kMostSteps + 1}) {
    ProgressMessage bad = progress;
    bad.steps[1].step = wild;
    EXPECT_THROW(decode_progress(encode(bad)), ProtocolError) << wild;
  }
}

TEST(Protocol, CaptureAndStacksRoundTrip) {
  auto capture = decode_capture(encode(CaptureMessage{2, 7, true}));
  EXPECT_EQ(capture.round, 2u);
  EXPECT_EQ(capture.id, 7u);
  EXPECT_TRUE(capture.hang);
  auto stacks = decode_stacks(encode(StacksMessage{7, "[]"}));
  EXPECT_EQ(stacks.id, 7u);
  EXPECT_EQ(stacks.stacks, "[]");
  EXPECT_THROW(decode_capture(encode(CaptureMessage{}) + "x"), ProtocolError);
}

TEST(Protocol, ForensicsFramesPassTheReader) {
  FrameReader reader;
  reader.append(encode_frame(MessageType::kStacksEnd, encode(TextMessage{1, "done"})));
  auto frame = reader.next();
  ASSERT_TRUE(frame);
  EXPECT_EQ(frame->type, MessageType::kStacksEnd);
  std::string unknown = encode_frame(MessageType::kStacksEnd, "");
  unknown[6] = static_cast<char>(kLastMessageType + 1);
  FrameReader strict;
  strict.append(unknown);
  EXPECT_THROW(strict.next(), ProtocolError);
}

}  // namespace
}  // namespace dlaunch::rendezvous

// ---- protocol 7: fencing

namespace dlaunch::rendezvous {
namespace {

TEST(Protocol7, EveryFrameCarriesItsSendersGeneration) {
  FrameReader reader;
  reader.append(encode_frame(MessageType::kHeartbeat, "", 7) + encode_frame(MessageType::kStop, "x", 0xfffffffe));
  auto first = reader.next();
  auto second = reader.next();
  ASSERT_TRUE(first && second);
  EXPECT_EQ(first->generation, 7u);
  EXPECT_EQ(second->generation, 0xfffffffeu);
  EXPECT_EQ(second->payload, "x");
  // The default is generation 0: a launcher that has not joined a round.
  reader.append(encode_frame(MessageType::kHeartbeat, ""));
  EXPECT_EQ(reader.next()->generation, 0u);
}

TEST(Protocol7, FencedAndStartedAreMessagesOfTheirOwn) {
  FrameReader reader;
  reader.append(encode_frame(MessageType::kFenced,
                             encode(TextMessage{2, "node 0 dropped this launcher in round 2"}), 2) +
                encode_frame(MessageType::kStarted, "", 3));
  auto fenced = reader.next();
  ASSERT_TRUE(fenced);
  EXPECT_EQ(fenced->type, MessageType::kFenced);
  EXPECT_EQ(decode_text(fenced->payload).reason, "node 0 dropped this launcher in round 2");
  auto started = reader.next();
  ASSERT_TRUE(started);
  EXPECT_EQ(started->type, MessageType::kStarted);
  EXPECT_EQ(started->generation, 3u);
  // A type past the last is still refused.
  std::string unknown = encode_frame(MessageType::kStarted, "");
  unknown[6] = static_cast<char>(kLastMessageType + 1);
  FrameReader strange;
  strange.append(unknown);
  EXPECT_THROW(strange.next(), ProtocolError);
}

TEST(Protocol7, TheWorldNamesTheJobsIncarnation) {
  World world;
  world.nproc_per_node = {1, 1};
  world.node_slots = {0, 1};
  world.incarnation = "5f0c2a9e11d04b7a";
  EXPECT_EQ(decode_world(encode(world)).incarnation, "5f0c2a9e11d04b7a");
}

TEST(Protocol7, AVerdictSaysWhenItsSideStepsAside) {
  Verdict aside;
  aside.kind = Verdict::Kind::kFailed;
  aside.stepped_aside = true;
  EXPECT_TRUE(decode_verdict(encode(VerdictMessage{2, aside})).verdict.stepped_aside);
  EXPECT_FALSE(decode_verdict(encode(VerdictMessage{2, Verdict{}})).verdict.stepped_aside);
  // Never on the wire: made alone is each launcher's own.
  Verdict alone;
  alone.decided_here = true;
  EXPECT_FALSE(decode_verdict(encode(VerdictMessage{0, alone})).verdict.decided_here);
}

}  // namespace
// Node 0 holds a reader per launcher for the job's life: once a large
// frame (a World) is read, the emptied buffer gives its memory back.
TEST(FrameReader, AnEmptiedBufferGivesBackALargeCapacity) {
  FrameReader reader;
  std::string frame = encode_frame(MessageType::kWorld, std::string(64 * 1024, 'w'));
  reader.append(frame.substr(0, 100));
  EXPECT_FALSE(reader.next());
  reader.append(frame.substr(100));
  EXPECT_GE(reader.capacity(), frame.size());
  auto read = reader.next();
  ASSERT_TRUE(read);
  EXPECT_EQ(read->payload.size(), 64u * 1024u);
  EXPECT_TRUE(reader.empty());
  EXPECT_LE(reader.capacity(), kKeptBufferCapacity);
}

}  // namespace dlaunch::rendezvous
