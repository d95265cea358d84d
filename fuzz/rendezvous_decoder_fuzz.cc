// rendezvous_decoder_fuzz: what a launcher or node 0's service does with the
// bytes a peer sends (wire/protocol.h).
//
// The first byte chooses a chunk size; the rest is fed to a FrameReader in
// chunks of that size, as a socket would deliver it, and to a second reader
// all at once: both must yield the same frames and fail alike. Every decoder
// in kDecoders runs on every frame's payload (and on the raw bytes, so
// payload bugs are found without a valid header). Checks that the only
// failure is ProtocolError, that encode_frame writes back what was read, and
// that a decoded message re-encodes to a payload that decodes to the same
// encoding (encode . decode is stable). Every frame is also opened by a
// sealed Session (a forged tag must be a ProtocolError, never a crash or an
// acceptance), and every World decoded is checked by world_mismatch(), which
// must say what is wrong without asserting.
//
// A new decode_* function is one more line in kDecoders.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rendezvous/world_check.h"
#include "wire/protocol.h"
#include "wire/session.h"
#include "wire/token.h"

namespace {

using namespace dlaunch;
using namespace dlaunch::rendezvous;

void check(bool condition, const char* decoder, const char* what) {
  if (condition) return;
  std::fprintf(stderr, "rendezvous_decoder_fuzz: %s: invariant broken: %s\n", decoder, what);
  std::abort();
}

// Decodes PAYLOAD and encodes the message again; throws ProtocolError.
template <auto Decode>
std::string reencode(std::string_view payload) {
  return rendezvous::encode(Decode(payload));
}

struct Decoder {
  const char* name;
  std::string (*roundtrip)(std::string_view payload);
};

// Every decode_* of protocol.h. For a message without an encode overload,
// write a lambda that only decodes: [](std::string_view p) { decode_x(p); return std::string(); }
constexpr Decoder kDecoders[] = {
    {"decode_challenge", reencode<rendezvous::decode_challenge>},
    {"decode_join", reencode<rendezvous::decode_join>},
    {"decode_welcome", reencode<rendezvous::decode_welcome>},
    {"decode_heartbeat", [](std::string_view p) { rendezvous::decode_heartbeat(p); return std::string(); }},
    {"decode_world", reencode<rendezvous::decode_world>},
    {"decode_text", reencode<rendezvous::decode_text>},
    {"decode_failure", reencode<rendezvous::decode_failure>},
    {"decode_outcome", reencode<rendezvous::decode_outcome>},
    {"decode_verdict", reencode<rendezvous::decode_verdict>},
    {"decode_progress", reencode<rendezvous::decode_progress>},
    {"decode_capture", reencode<rendezvous::decode_capture>},
    {"decode_stacks", reencode<rendezvous::decode_stacks>},
    {"decode_probe", reencode<rendezvous::decode_probe>},
    {"decode_probe_report", reencode<rendezvous::decode_probe_report>},
    {"decode_probe_hello", reencode<rendezvous::decode_probe_hello>},
    {"decode_probe_ack", reencode<rendezvous::decode_probe_ack>},
    {"decode_gate", reencode<rendezvous::decode_gate>},
    {"decode_gate_report", reencode<rendezvous::decode_gate_report>},
};

void decode_with_all(std::string_view payload) {
  for (const Decoder& decoder : kDecoders) {
    std::string once;
    try {
      once = decoder.roundtrip(payload);
    } catch (const ProtocolError&) {
      continue;
    }
    std::string twice;
    try {
      twice = decoder.roundtrip(once);
    } catch (const ProtocolError&) {
      check(false, decoder.name, "a re-encoded message does not decode");
    }
    check(twice == once, decoder.name, "encode(decode(encode(decode(p)))) != encode(decode(p))");
  }
}

// A sealed session accepts no frame a fuzzer can forge: the key is derived
// from a token the input never contains, so every open must fail cleanly.
void open_sealed(const rendezvous::Frame& frame) {
  Session session("fuzz token that no input holds", std::string(rendezvous::kChallengeSize, 's'),
                  std::string(rendezvous::kChallengeSize, 'l'), rendezvous::End::kLauncher);
  try {
    session.open(frame);
  } catch (const ProtocolError&) {
    return;
  }
  check(false, "Session::open", "accepted a frame without the token's tag");
}

// world_mismatch() judges any World a peer can send without asserting, and
// a World it accepts is safe to plan workers from.
void check_world(std::string_view payload) {
  rendezvous::World world;
  try {
    world = rendezvous::decode_world(payload);
  } catch (const ProtocolError&) {
    return;
  }
  if (world.nnodes() == 0 || world.node_slots.empty()) return;
  // This launcher: node rank 0's slot, in a job with room for every slot the World names.
  int highest = 0;
  for (const auto* slots : {&world.node_slots, &world.spare_slots, &world.benched_slots})
    for (int slot : *slots) highest = std::max(highest, slot);
  rendezvous::WorldExpectation expected;
  expected.round = world.round;
  expected.nnodes = world.nnodes();
  expected.spare_nodes = std::max(0, highest + 1 - world.nnodes());
  expected.slot = world.node_slots[0];
  expected.nproc = world.nproc_per_node[0];
  expected.run_id = world.run_id;
  expected.allow_uneven = true;
  if (rendezvous::world_mismatch(world, expected)) return;
  auto rank = world.node_rank_of(expected.slot);
  check(rank.has_value() && world.world_size() > 0 &&
            world.rank_offset(world.nnodes() - 1) < world.world_size(),
        "world_mismatch", "accepted a World whose ranks do not add up");
}

struct Frames {
  std::vector<rendezvous::Frame> frames;
  bool failed = false;
};

// Feeds BYTES to a FrameReader CHUNK bytes at a time, taking every whole
// frame after each chunk, until the bytes end or the reader throws.
Frames read_frames(std::string_view bytes, std::size_t chunk) {
  Frames result;
  rendezvous::FrameReader reader;
  try {
    while (!bytes.empty()) {
      std::size_t take = chunk < bytes.size() ? chunk : bytes.size();
      reader.append(bytes.substr(0, take));
      bytes.remove_prefix(take);
      while (auto frame = reader.next()) result.frames.push_back(std::move(*frame));
    }
  } catch (const ProtocolError&) {
    result.failed = true;
  }
  return result;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  std::size_t chunk = static_cast<std::size_t>(data[0] % 64) + 1;
  std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);

  Frames chunked = read_frames(bytes, chunk);
  Frames whole = read_frames(bytes, bytes.size());
  check(chunked.failed == whole.failed, "FrameReader", "chunked and whole reads fail differently");
  check(chunked.frames.size() == whole.frames.size(), "FrameReader",
        "chunked and whole reads yield different frame counts");
  for (std::size_t i = 0; i < chunked.frames.size(); ++i) {
    check(chunked.frames[i].type == whole.frames[i].type &&
              chunked.frames[i].payload == whole.frames[i].payload &&
              chunked.frames[i].generation == whole.frames[i].generation,
          "FrameReader", "chunked and whole reads yield different frames");
    // A frame read can be written again and reads back the same.
    rendezvous::FrameReader again;
    again.append(rendezvous::encode_frame(chunked.frames[i].type, chunked.frames[i].payload,
                                          chunked.frames[i].generation));
    std::optional<rendezvous::Frame> back = again.next();
    check(back && back->type == chunked.frames[i].type &&
              back->payload == chunked.frames[i].payload &&
              back->generation == chunked.frames[i].generation && again.empty(),
          "encode_frame", "a frame read does not read back the same after encode_frame");
  }

  for (const rendezvous::Frame& frame : chunked.frames) {
    decode_with_all(frame.payload);
    open_sealed(frame);
    check_world(frame.payload);
  }
  decode_with_all(bytes);
  return 0;
}
