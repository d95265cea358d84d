// The rendezvous wire format between launchers and node 0's service.
//
// Every frame: magic "DLRV", protocol version, a one-byte type, the
// sender's generation (the round it is in), a payload length, then the
// payload of big-endian integers and length-prefixed strings. The magic and version let the service refuse stray or foreign
// connections instead of misreading them; the length cap keeps a garbage
// header from making it allocate without bound.
//
// A conversation: the service greets every connection with a Challenge (its
// nonce); the launcher answers with a Join that carries a nonce of its own,
// its proof of the job's token (wire/token.h), its dlaunch version and
// its preflight result; the service answers with a Welcome. With a token,
// the Join itself and every frame after it, both ways, are sealed
// (encrypted and authenticated) with keys derived from the token and both
// nonces (wire/session.h): the first Join travels as a SealedJoin, its
// nonce in clear before the sealed Join. The Welcome is node 0's proof that
// it holds the token too. The service sends the World once every
// node joined. From then on both sides send Heartbeats, and
// Failure/Stop/Outcome/Verdict end the round.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "net/interfaces.h"
#include "util/error.h"
#include "wire/progress.h"
#include "wire/world.h"

namespace dlaunch::rendezvous {

inline constexpr std::uint32_t kMagic = 0x444c5256;  // "DLRV"
// 3: mutual authentication (launcher nonce, Welcome, sealed frames).
// 4: spare nodes (slots in the Join and the World, a timeline in the Verdict).
// 5: hang forensics (Progress, Capture, Stacks, StacksEnd; observers' Joins).
// 6: network interfaces in the Join, reachability probes, the pre-start
//    gate, each slot's interface in the World.
// 7: fencing: every frame carries its sender's generation (the round), the
//    service tells a launcher it dropped why (Fenced), the World names the
//    job's incarnation, a Verdict says when its side steps aside; launchers
//    report their workers running (Started), for the job's down time.
// 8: confidentiality: with a token every frame from the first Join on is
//    encrypted (AES-256-GCM until 13) instead of only tagged; the first Join travels
//    as a SealedJoin.
// 9: node ranks by arrival (torchrun's c10d rendezvous without
//    --node-rank): a Join may ask for any free slot (kAnySlot), and the
//    Welcome says which slot the launcher has.
// 10: health checks between rounds: a Join after the first round carries
//    the launcher's failed check (health_error), and node 0 benches it.
// 11: the failure doctor: an Outcome counts its node's workers that failed
//    as a consequence (NodeOutcome::consequences), a Verdict the job's.
// 12: an Outcome carries its node's highest progress step (top_step), so
//    node 0 weighs "no further" in steps across nodes, not in time only.
// 13: sealed frames use ChaCha20-Poly1305 (libsodium) instead of
//    AES-256-GCM (OpenSSL): the same sizes, another cipher, so a launcher
//    of 12 is refused by the version rather than failing every frame.
inline constexpr std::uint16_t kVersion = 13;
inline constexpr std::size_t kHeaderSize = 4 + 2 + 1 + 4 + 4;
inline constexpr std::uint32_t kMaxPayload = 1 << 20;
// A Join's slot when the launcher has none yet: node 0's service gives it
// the first free one (node ranks by arrival, as torchrun's c10d).
inline constexpr std::uint32_t kAnySlot = 0xFFFFFFFFu;
// What a peer may send before it has proved itself: a Join is a few hundred
// bytes, so a stranger cannot make node 0 buffer a megabyte per connection.
inline constexpr std::uint32_t kMaxHandshakePayload = 16 * 1024;

enum class MessageType : std::uint8_t {
  kJoin = 1,     // launcher -> service: I am node R of N for round K
  kWorld = 2,    // service -> launchers: everyone is here, start
  kAbort = 3,    // service -> launchers: the job cannot start (reason)
  kFailure = 4,  // launcher -> service: my workers failed, stop the others now
  kStop = 5,     // service -> launchers: stop your workers (reason)
  kOutcome = 6,  // launcher -> service: my workers have all exited
  kVerdict = 7,  // service -> launchers: how the job ends (or restarts)
  kChallenge = 8,  // service -> launcher, first on every connection: prove the token
  kHeartbeat = 9,  // both ways while connected: I am alive
  kWelcome = 10,   // service -> launcher, after a valid Join: node 0's own proof (sealed)
  kProgress = 11,   // launcher -> service while workers run: how long idle, which steps
  kCapture = 12,    // service -> launchers: capture every worker's stack now (a hang, an observer)
  kStacks = 13,     // launcher -> service: its workers' stacks; service -> observer: one node's
  kStacksEnd = 14,  // service -> observer: every node's stacks were sent (or the capture could not run)
  kProbe = 15,        // service -> launcher: probe these addresses of the other launchers
  kProbeReport = 16,  // launcher -> service: which of them answered and proved the token
  kProbeHello = 17,   // prober -> a launcher's probe port, after its Challenge: I am slot S of the job
  kProbeAck = 18,     // probed launcher -> prober: and I am slot T (its proof)
  kGate = 19,         // service -> launcher: run the pre-start gate's check as gate rank R
  kGateReport = 20,   // launcher -> service: how its gate check ended (its JSON line)
  kFenced = 21,       // service -> launcher: you are out of the job (dropped while unreachable), stop now
  kStarted = 22,      // launcher -> service: my workers of this generation run
  // launcher -> service, with a token: its first Join of a connection, as
  // its nonce then the Join sealed under the new session (wire/session.h)
  kSealedJoin = 23,
};
inline constexpr std::uint8_t kLastMessageType = 23;

// Bounds on what a launcher reports of its interfaces: a Join must stay
// within kMaxHandshakePayload whatever the host has.
inline constexpr std::size_t kMostInterfaces = 64;
inline constexpr std::size_t kMostAddressesPerInterface = 8;

// How often each side sends a heartbeat for a given --heartbeat-timeout:
// four beats per timeout, so one lost or late beat never counts as silence.
// How long either end waits for the other's next handshake message: node 0
// for a connection's Join, a launcher for node 0's Challenge and Welcome.
inline constexpr std::chrono::milliseconds kDefaultHandshakeTimeout{5'000};

// --heartbeat-timeout's default.
inline constexpr std::chrono::milliseconds kDefaultHeartbeatTimeout{30'000};

inline std::chrono::milliseconds heartbeat_interval(std::chrono::milliseconds timeout) {
  return std::max(std::chrono::milliseconds(50), timeout / 4);
}

// A malformed frame or payload (util/error.h). The service drops such a peer.
using ProtocolError = ::dlaunch::util::ProtocolError;

struct Frame {
  MessageType type;
  std::string payload;
  // The sender's generation: the round it is in (a launcher: the round it
  // joined last; the service: the round it gathers or runs). Rounds only
  // grow, across a take-over too, so a frame from a launcher or a service
  // the job has left behind carries an older one.
  std::uint32_t generation = 0;
};

// Encodes a frame for the wire.
std::string encode_frame(MessageType type, std::string_view payload, std::uint32_t generation = 0);

// Accumulates bytes from a stream socket and yields whole frames.
// What an emptied frame buffer or a drained outbox may keep of its
// capacity: node 0 holds one of each per launcher for the job's life.
inline constexpr std::size_t kKeptBufferCapacity = 4096;

class FrameReader {
 public:
  void append(std::string_view bytes) { buffer_.append(bytes); }
  // The next complete frame, nullopt when more bytes are needed. Throws
  // ProtocolError on a wrong magic, version, type or a length over the limit.
  std::optional<Frame> next();
  bool empty() const { return buffer_.empty(); }
  std::size_t buffered() const { return buffer_.size(); }
  // The memory the buffer holds (at most kKeptBufferCapacity once emptied).
  std::size_t capacity() const { return buffer_.capacity(); }
  // The longest payload accepted (default kMaxPayload): what bounds the
  // buffer, since a header is checked as soon as it arrives.
  void set_max_payload(std::uint32_t bytes) { max_payload_ = bytes; }
 private:
  std::string buffer_;
  std::uint32_t max_payload_ = kMaxPayload;
};

struct ChallengeMessage {
  std::string nonce;            // kChallengeSize random bytes, new for every connection
  bool token_required = false;  // node 0 has a token: every launcher must prove it
  // node 0's --heartbeat-timeout. Unproved: a launcher with a token takes
  // it from the sealed Welcome instead.
  std::uint32_t heartbeat_timeout_ms = 0;
};

struct JoinMessage {
  std::string run_id;
  std::uint32_t round = 0;
  // The launcher's slot: 0 to nnodes + spare_nodes - 1, or kAnySlot
  // before its first World when its node rank comes by arrival.
  std::uint32_t node_rank = 0;
  std::uint32_t nnodes = 0;     // the job's training size
  std::uint32_t spare_nodes = 0;
  std::uint32_t min_nodes = 0;  // --min-nodes: every launcher must give the same
  std::uint32_t nproc = 0;
  std::string host;
  std::string dlaunch_version;
  bool allow_uneven = false;
  std::string preflight_error;  // non-empty: this node cannot run its part; abort the job
  // Not a launcher: `dlaunch stacks` asking for every worker's stack. Only
  // the token and the run id (when given) count; the rest is ignored.
  bool observer = false;
  std::string nonce;  // the launcher's kChallengeSize random bytes, new for every connection
  std::string proof;  // join_proof(token, challenge, nonce, signed_part(join)); empty without a token
  // This host's interfaces (at most kMostInterfaces), where its probe
  // responder listens (0: none), and a port free on this host for the
  // workers' MASTER_PORT should this node take node rank 0 while the
  // service's own host does not train (the gate benched it).
  std::vector<net::Interface> interfaces;
  std::uint32_t probe_port = 0;
  std::uint32_t free_port = 0;
  // Non-empty in a Join of a round after the first: this node failed a
  // health check between rounds (launch/health_check), one line naming the
  // check and why. Node 0 benches it for a spare, or stops the job.
  std::string health_error;
};

// The bytes of JOIN that its proof covers: everything but the proof.
std::string signed_part(const JoinMessage& join);

// A launcher's first Join with a token. Only the nonce (which node 0 needs
// to derive the session) and the slot it claims (so that a refusal for a
// wrong token can name the node: a slot number tells the path nothing it
// needs) are in clear; node 0 checks both against the sealed Join.
struct SealedJoinMessage {
  std::string nonce;  // kChallengeSize bytes
  std::uint32_t slot = 0;
  std::string sealed;  // the Join, sealed by the launcher's Session
};

struct WelcomeMessage {
  std::uint32_t heartbeat_timeout_ms = 0;  // node 0's --heartbeat-timeout, which every node adopts
  std::uint32_t slot = 0;  // the launcher's slot: the one its Join named, or the one given for kAnySlot
};

struct TextMessage {  // kAbort, kStop and kFenced
  std::uint32_t round = 0;
  std::string reason;
};

struct OutcomeMessage {
  std::uint32_t round = 0;
  NodeOutcome outcome;
};

struct CaptureMessage {
  std::uint32_t round = 0;
  std::uint32_t id = 0;  // which capture the Stacks answer
  bool hang = false;     // a hang's (the job stops after it) or an observer's (it goes on)
};

struct StacksMessage {
  std::uint32_t id = 0;
  std::string stacks;  // forensics::encode_worker_stacks of one node's workers
};

// One address of another launcher to probe.
struct ProbeTarget {
  std::uint32_t slot = 0;
  std::string address;
  std::uint32_t port = 0;
};

struct ProbeMessage {  // kProbe
  std::uint32_t round = 0;
  std::vector<ProbeTarget> targets;
};

struct ProbeOutcome {
  std::uint32_t slot = 0;
  std::string address;
  bool reached = false;  // connected, and the launcher there proved itself slot SLOT of this job
};

struct ProbeReportMessage {  // kProbeReport
  std::uint32_t round = 0;
  std::vector<ProbeOutcome> outcomes;
};

struct ProbeHelloMessage {  // kProbeHello
  std::string run_id;
  std::uint32_t from_slot = 0;
  std::uint32_t to_slot = 0;
  std::string nonce;  // the prober's kChallengeSize random bytes
  std::string proof;  // probe_proof(token, "hello", challenge, nonce, run id and slots); empty without a token
};

struct ProbeAckMessage {  // kProbeAck
  std::uint32_t slot = 0;
  std::string proof;  // probe_proof(token, "ack", challenge, nonce, run id and slot); empty without a token
};

struct GateMessage {  // kGate
  std::uint32_t round = 0;
  std::uint32_t gate_rank = 0;
  std::uint32_t gate_size = 0;
  std::string master_addr;  // gate rank 0's store
  std::uint32_t master_port = 0;
  std::uint32_t pair_bytes = 0;
  std::uint32_t timeout_ms = 0;
  std::string ifname;  // this host's chosen interface ("" unknown)
  // What every gate rank proves to gate rank 0's store (random, new for
  // each gate): without it any local user could post a forged outcome.
  std::string store_secret;
};

struct GateReportMessage {  // kGateReport
  std::int32_t exit_code = 0;
  std::string line;   // the check's JSON line ("" when it printed none)
  std::string error;  // what the launcher saw (could not start it, timed out)
};

struct VerdictMessage {
  std::uint32_t round = 0;
  Verdict verdict;
};

std::string encode(const ChallengeMessage& message);
std::string encode(const JoinMessage& message);
std::string encode(const SealedJoinMessage& message);
std::string encode(const WelcomeMessage& message);
std::string encode(const World& world);
std::string encode(const TextMessage& message);
std::string encode(const Failure& failure);
std::string encode(const OutcomeMessage& message);
std::string encode(const VerdictMessage& message);
std::string encode(const ProgressMessage& message);
std::string encode(const CaptureMessage& message);
std::string encode(const StacksMessage& message);
std::string encode(const ProbeMessage& message);
std::string encode(const ProbeReportMessage& message);
std::string encode(const ProbeHelloMessage& message);
std::string encode(const ProbeAckMessage& message);
std::string encode(const GateMessage& message);
std::string encode(const GateReportMessage& message);

// Each throws ProtocolError when PAYLOAD is truncated or malformed.
ChallengeMessage decode_challenge(std::string_view payload);
JoinMessage decode_join(std::string_view payload);
SealedJoinMessage decode_sealed_join(std::string_view payload);
WelcomeMessage decode_welcome(std::string_view payload);
void decode_heartbeat(std::string_view payload);  // checks that it is empty
World decode_world(std::string_view payload);
TextMessage decode_text(std::string_view payload);
Failure decode_failure(std::string_view payload);
OutcomeMessage decode_outcome(std::string_view payload);
VerdictMessage decode_verdict(std::string_view payload);
ProgressMessage decode_progress(std::string_view payload);
CaptureMessage decode_capture(std::string_view payload);
StacksMessage decode_stacks(std::string_view payload);
ProbeMessage decode_probe(std::string_view payload);
ProbeReportMessage decode_probe_report(std::string_view payload);
ProbeHelloMessage decode_probe_hello(std::string_view payload);
ProbeAckMessage decode_probe_ack(std::string_view payload);
GateMessage decode_gate(std::string_view payload);
GateReportMessage decode_gate_report(std::string_view payload);

// The signed fields of a probe's Hello and Ack.
std::string signed_part(const ProbeHelloMessage& message);
std::string probe_ack_signed_part(const std::string& run_id, std::uint32_t slot);

}  // namespace dlaunch::rendezvous
