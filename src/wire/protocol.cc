#include "wire/protocol.h"

#include <concepts>
#include <fmt/format.h>
#include <type_traits>

#include "wire/token.h"

namespace dlaunch::rendezvous {
namespace {

constexpr std::uint32_t kMaxListSize = 1 << 16;

class Writer {
 public:
  Writer& u8(std::uint8_t value) {
    bytes_.push_back(static_cast<char>(value));
    return *this;
  }
  Writer& u16(std::uint16_t value) { return u8(static_cast<std::uint8_t>(value >> 8)).u8(static_cast<std::uint8_t>(value)); }
  Writer& u32(std::uint32_t value) {
    return u16(static_cast<std::uint16_t>(value >> 16)).u16(static_cast<std::uint16_t>(value));
  }
  Writer& i32(std::int32_t value) { return u32(static_cast<std::uint32_t>(value)); }
  Writer& str(std::string_view text) {
    u32(static_cast<std::uint32_t>(text.size()));
    bytes_.append(text);
    return *this;
  }
  std::string take() { return std::move(bytes_); }

  // A message's fields in wire order (describe() below): each by its type,
  // a bool as u8, an int as i32, a list as its size and its items.
  template <class... T>
  void operator()(const T&... values) {
    (field(values), ...);
  }
  void field(std::uint32_t value) { u32(value); }
  void field(std::int32_t value) { i32(value); }
  // High half first, as a progress step.
  void field(std::int64_t value) {
    auto bits = static_cast<std::uint64_t>(value);
    u32(static_cast<std::uint32_t>(bits >> 32)).u32(static_cast<std::uint32_t>(bits));
  }
  void field(bool value) { u8(value ? 1 : 0); }
  void field(const std::string& value) { str(value); }
  template <class T>
  void field(const std::vector<T>& list) {
    u32(static_cast<std::uint32_t>(list.size()));
    for (const auto& item : list) field(item);
  }
  template <class T>
  void field(const std::optional<T>& value) {
    u8(value ? 1 : 0);
    if (value) field(*value);
  }
  template <class T>
    requires std::is_class_v<T>
  void field(const T& record) {
    describe(*this, record);
  }

 private:
  std::string bytes_;
};

class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  std::uint8_t u8() {
    need(1);
    auto value = static_cast<std::uint8_t>(bytes_[0]);
    bytes_.remove_prefix(1);
    return value;
  }
  std::uint16_t u16() { return static_cast<std::uint16_t>((u8() << 8) | u8()); }
  std::uint32_t u32() {
    std::uint32_t high = u16();
    return (high << 16) | u16();
  }
  std::int32_t i32() { return static_cast<std::int32_t>(u32()); }
  std::string str() {
    std::uint32_t size = u32();
    need(size);
    std::string text(bytes_.substr(0, size));
    bytes_.remove_prefix(size);
    return text;
  }
  std::uint32_t list_size() {
    std::uint32_t size = u32();
    if (size > kMaxListSize) throw ProtocolError(fmt::format("list of {} items is too long", size));
    return size;
  }
  void finish() const {
    if (!bytes_.empty()) throw ProtocolError(fmt::format("{} unexpected trailing bytes", bytes_.size()));
  }

  // The same fields as Writer's, read in the same order; a list is bounded
  // by list_size().
  template <class... T>
  void operator()(T&... values) {
    (field(values), ...);
  }
  void field(std::uint32_t& value) { value = u32(); }
  void field(std::int32_t& value) { value = i32(); }
  void field(std::int64_t& value) {
    std::uint64_t high = u32();
    value = static_cast<std::int64_t>((high << 32) | u32());
  }
  void field(bool& value) { value = u8() != 0; }
  void field(std::string& value) { value = str(); }
  template <class T>
  void field(std::vector<T>& list) {
    for (std::uint32_t i = list_size(); i > 0; --i) field(list.emplace_back());
  }
  template <class T>
  void field(std::optional<T>& value) {
    if (u8() == 0) return value.reset();
    field(value.emplace());
  }
  template <class T>
    requires std::is_class_v<T>
  void field(T& record) {
    describe(*this, record);
  }

 private:
  void need(std::size_t size) const {
    if (bytes_.size() < size) throw ProtocolError("message is truncated");
  }
  std::string_view bytes_;
};

// Each message, and each record inside one, as its fields in wire order:
// written once for both ends (IO is a Writer or a Reader, M const or not).
template <class M, class T>
concept Is = std::same_as<std::remove_const_t<M>, T>;

void describe(auto& io, Is<Failure> auto& failure) {
  io(failure.global_rank, failure.local_rank, failure.node_rank, failure.host, failure.pid, failure.exit_code,
     failure.signal, failure.time, failure.log_file, failure.error_message, failure.description,
     failure.last_lines);
}
void describe(auto& io, Is<ChallengeMessage> auto& message) {
  io(message.nonce, message.token_required, message.heartbeat_timeout_ms);
}
// The part of a Join its proof covers.
void describe_signed(auto& io, Is<JoinMessage> auto& message) {
  io(message.run_id, message.round, message.node_rank, message.nnodes, message.spare_nodes, message.min_nodes,
     message.nproc, message.host, message.dlaunch_version, message.allow_uneven, message.preflight_error,
     message.observer);
  transfer_interfaces(io, message.interfaces);
  io(message.probe_port, message.free_port, message.health_error);
}
void describe(auto& io, Is<SealedJoinMessage> auto& message) { io(message.nonce, message.slot, message.sealed); }
void describe(auto& io, Is<WelcomeMessage> auto& message) { io(message.heartbeat_timeout_ms, message.slot); }
void describe(auto& io, Is<TextMessage> auto& message) { io(message.round, message.reason); }
void describe(auto& io, Is<OutcomeMessage> auto& message) {
  io(message.round, message.outcome.succeeded, message.outcome.stop_signal, message.outcome.preempted,
     message.outcome.failure, message.outcome.consequences, message.outcome.top_step);
}
void describe(auto& io, Is<CaptureMessage> auto& message) { io(message.round, message.id, message.hang); }
void describe(auto& io, Is<StacksMessage> auto& message) { io(message.id, message.stacks); }
void describe(auto& io, Is<ProbeTarget> auto& target) { io(target.slot, target.address, target.port); }
void describe(auto& io, Is<ProbeMessage> auto& message) { io(message.round, message.targets); }
void describe(auto& io, Is<ProbeOutcome> auto& outcome) { io(outcome.slot, outcome.address, outcome.reached); }
void describe(auto& io, Is<ProbeReportMessage> auto& message) { io(message.round, message.outcomes); }
// The part of a probe's hello its proof covers.
void describe_signed(auto& io, Is<ProbeHelloMessage> auto& message) {
  io(message.run_id, message.from_slot, message.to_slot);
}
void describe(auto& io, Is<ProbeHelloMessage> auto& message) {
  io(message.nonce, message.proof);
  describe_signed(io, message);
}
void describe(auto& io, Is<ProbeAckMessage> auto& message) { io(message.slot, message.proof); }
void describe(auto& io, Is<GateMessage> auto& message) {
  io(message.round, message.gate_rank, message.gate_size, message.master_addr, message.master_port,
     message.pair_bytes, message.timeout_ms, message.ifname, message.store_secret);
}
void describe(auto& io, Is<GateReportMessage> auto& message) { io(message.exit_code, message.line, message.error); }

template <class M>
std::string encode_message(const M& message) {
  Writer writer;
  describe(writer, message);
  return writer.take();
}

// MESSAGE decoded from PAYLOAD, all of it.
template <class M>
M decode_message(std::string_view payload) {
  Reader reader(payload);
  M message;
  describe(reader, message);
  reader.finish();
  return message;
}

void check_nonce(const std::string& nonce, const char* what) {
  if (nonce.size() != kChallengeSize)
    throw ProtocolError(fmt::format("{} of {} bytes, expected {}", what, nonce.size(), kChallengeSize));
}

// Slots travel as runs of consecutive numbers (start, count): slots 0..N-1
// in order, the usual case, are one run however many nodes there are.
void write_slots(Writer& writer, const std::vector<int>& slots) {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> runs;
  for (int slot : slots) {
    auto value = static_cast<std::uint32_t>(slot);
    if (!runs.empty() && runs.back().first + runs.back().second == value) ++runs.back().second;
    else runs.emplace_back(value, 1);
  }
  writer.u32(static_cast<std::uint32_t>(runs.size()));
  for (const auto& [start, count] : runs) writer.u32(start).u32(count);
}

std::vector<int> read_slots(Reader& reader) {
  std::vector<int> slots;
  for (std::uint32_t i = reader.list_size(); i > 0; --i) {
    std::uint32_t start = reader.u32();
    std::uint32_t count = reader.u32();
    if (count == 0 || start >= kMaxListSize || count > kMaxListSize - start ||
        slots.size() + count > kMaxListSize)
      throw ProtocolError(fmt::format("bad slot run ({} slots from {})", count, start));
    for (std::uint32_t slot = start; slot < start + count; ++slot) slots.push_back(static_cast<int>(slot));
  }
  return slots;
}

// Interfaces as a launcher reports them: bounded in count, addresses and
// name length, so a Join stays small whatever the host (or a liar) has.
constexpr std::size_t kLongestInterfaceName = 64;

void write_interfaces(Writer& writer, const std::vector<net::Interface>& interfaces) {
  std::size_t count = std::min(interfaces.size(), kMostInterfaces);
  writer.u32(static_cast<std::uint32_t>(count));
  for (std::size_t i = 0; i < count; ++i) {
    const net::Interface& interface = interfaces[i];
    writer.str(interface.name.substr(0, kLongestInterfaceName)).i32(interface.index);
    std::vector<std::string> addresses(
        interface.addresses.begin(),
        interface.addresses.begin() +
            static_cast<std::ptrdiff_t>(std::min(interface.addresses.size(), kMostAddressesPerInterface)));
    writer.field(addresses);
    writer.u8(interface.up ? 1 : 0).i32(interface.speed_mbps).i32(interface.mtu).u8(interface.loopback ? 1 : 0);
    writer.str(interface.kind.substr(0, kLongestInterfaceName)).str(interface.excluded.substr(0, 256));
  }
}

std::vector<net::Interface> read_interfaces(Reader& reader) {
  std::uint32_t count = reader.list_size();
  if (count > kMostInterfaces) throw ProtocolError(fmt::format("{} interfaces reported, at most {}", count, kMostInterfaces));
  std::vector<net::Interface> interfaces(count);
  for (auto& interface : interfaces) {
    interface.name = reader.str();
    interface.index = reader.i32();
    reader.field(interface.addresses);
    interface.up = reader.u8() != 0;
    interface.speed_mbps = reader.i32();
    interface.mtu = reader.i32();
    interface.loopback = reader.u8() != 0;
    interface.kind = reader.str();
    interface.excluded = reader.str();
    if (interface.name.empty() || interface.name.size() > kLongestInterfaceName ||
        interface.addresses.size() > kMostAddressesPerInterface || interface.kind.size() > kLongestInterfaceName ||
        interface.excluded.size() > 256)
      throw ProtocolError(fmt::format("malformed interface '{}'", interface.name.substr(0, kLongestInterfaceName)));
  }
  return interfaces;
}

void transfer_interfaces(Writer& writer, const std::vector<net::Interface>& interfaces) {
  write_interfaces(writer, interfaces);
}
void transfer_interfaces(Reader& reader, std::vector<net::Interface>& interfaces) {
  interfaces = read_interfaces(reader);
}

}  // namespace

std::string encode_frame(MessageType type, std::string_view payload, std::uint32_t generation) {
  Writer writer;
  writer.u32(kMagic).u16(kVersion).u8(static_cast<std::uint8_t>(type));
  writer.u32(generation).u32(static_cast<std::uint32_t>(payload.size()));
  std::string frame = writer.take();
  frame.append(payload);
  return frame;
}

std::optional<Frame> FrameReader::next() {
  if (buffer_.size() < kHeaderSize) return std::nullopt;
  Reader header(std::string_view(buffer_).substr(0, kHeaderSize));
  std::uint32_t magic = header.u32();
  if (magic != kMagic) throw ProtocolError("not a dlaunch rendezvous peer (wrong magic number)");
  std::uint16_t version = header.u16();
  if (version != kVersion)
    throw ProtocolError(fmt::format(
        "peer speaks rendezvous protocol version {}, this dlaunch speaks {}; run the same dlaunch "
        "version on every node",
        version, kVersion));
  std::uint8_t type = header.u8();
  if (type < 1 || type > kLastMessageType) throw ProtocolError(fmt::format("unknown message type {}", type));
  std::uint32_t generation = header.u32();
  std::uint32_t length = header.u32();
  if (length > max_payload_)
    throw ProtocolError(fmt::format("message of {} bytes is too long (at most {} here)", length, max_payload_));
  if (buffer_.size() < kHeaderSize + length) return std::nullopt;
  Frame frame{static_cast<MessageType>(type), buffer_.substr(kHeaderSize, length), generation};
  buffer_.erase(0, kHeaderSize + length);
  // An emptied buffer keeps its capacity: node 0 holds one reader per
  // launcher, and 1,024 of them kept 16 KiB and more each for the job's
  // life (issue 28). A large one is given back.
  if (buffer_.empty() && buffer_.capacity() > kKeptBufferCapacity) std::string().swap(buffer_);
  return frame;
}

std::string encode(const ChallengeMessage& message) { return encode_message(message); }

ChallengeMessage decode_challenge(std::string_view payload) {
  auto message = decode_message<ChallengeMessage>(payload);
  check_nonce(message.nonce, "challenge");
  return message;
}

std::string signed_part(const JoinMessage& message) {
  Writer writer;
  describe_signed(writer, message);
  return writer.take();
}

std::string encode(const JoinMessage& message) {
  Writer writer;
  writer(message.proof, message.nonce);
  return writer.take() + signed_part(message);
}

JoinMessage decode_join(std::string_view payload) {
  Reader reader(payload);
  JoinMessage message;
  reader(message.proof, message.nonce);
  check_nonce(message.nonce, "join nonce");
  describe_signed(reader, message);
  reader.finish();
  if (message.probe_port > 65535 || message.free_port > 65535)
    throw ProtocolError(fmt::format("join names port {} or {}, beyond 65535", message.probe_port, message.free_port));
  return message;
}

std::string encode(const SealedJoinMessage& message) { return encode_message(message); }

SealedJoinMessage decode_sealed_join(std::string_view payload) {
  auto message = decode_message<SealedJoinMessage>(payload);
  check_nonce(message.nonce, "sealed join with a nonce");
  return message;
}

std::string encode(const WelcomeMessage& message) { return encode_message(message); }

WelcomeMessage decode_welcome(std::string_view payload) { return decode_message<WelcomeMessage>(payload); }

void decode_heartbeat(std::string_view payload) { Reader(payload).finish(); }

// Worker counts travel as runs of equal values: every launcher receives the
// World, so with thousands of alike nodes a per-node list would make the
// service send N^2 bytes.
std::string encode(const World& world) {
  Writer writer;
  writer.u32(static_cast<std::uint32_t>(world.round)).str(world.worker_master_addr);
  writer.u32(static_cast<std::uint32_t>(world.worker_master_port)).str(world.run_id);
  writer.u32(static_cast<std::uint32_t>(world.heartbeat_timeout_ms)).str(world.incarnation);
  std::vector<std::pair<std::uint32_t, int>> runs;
  for (int nproc : world.nproc_per_node) {
    if (!runs.empty() && runs.back().second == nproc) ++runs.back().first;
    else runs.emplace_back(1, nproc);
  }
  writer.u32(static_cast<std::uint32_t>(runs.size()));
  for (const auto& [count, nproc] : runs) writer.u32(count).u32(static_cast<std::uint32_t>(nproc));
  write_slots(writer, world.node_slots);
  write_slots(writer, world.spare_slots);
  write_slots(writer, world.benched_slots);
  writer(world.addresses, world.ifnames, world.ifaddresses);
  return writer.take();
}

World decode_world(std::string_view payload) {
  Reader reader(payload);
  World world;
  world.round = static_cast<int>(reader.u32());
  world.worker_master_addr = reader.str();
  world.worker_master_port = static_cast<int>(reader.u32());
  world.run_id = reader.str();
  world.heartbeat_timeout_ms = static_cast<int>(reader.u32());
  world.incarnation = reader.str();
  for (std::uint32_t i = reader.list_size(); i > 0; --i) {
    std::uint32_t count = reader.u32();
    std::uint32_t nproc = reader.u32();
    if (count == 0 || nproc == 0 || nproc > kMaxListSize ||
        world.nproc_per_node.size() + count > kMaxListSize)
      throw ProtocolError(fmt::format("bad worker count run ({} nodes of {} workers)", count, nproc));
    world.nproc_per_node.insert(world.nproc_per_node.end(), count, static_cast<int>(nproc));
  }
  world.node_slots = read_slots(reader);
  world.spare_slots = read_slots(reader);
  world.benched_slots = read_slots(reader);
  reader(world.addresses, world.ifnames, world.ifaddresses);
  reader.finish();
  return world;
}

std::string encode(const TextMessage& message) { return encode_message(message); }

TextMessage decode_text(std::string_view payload) { return decode_message<TextMessage>(payload); }

std::string encode(const Failure& failure) { return encode_message(failure); }

Failure decode_failure(std::string_view payload) { return decode_message<Failure>(payload); }

std::string encode(const OutcomeMessage& message) { return encode_message(message); }

OutcomeMessage decode_outcome(std::string_view payload) {
  auto message = decode_message<OutcomeMessage>(payload);
  if (message.outcome.top_step && !is_step(*message.outcome.top_step))
    throw ProtocolError(fmt::format("an outcome at step {}, outside 0..{}", *message.outcome.top_step, kMostSteps));
  return message;
}

std::string encode(const VerdictMessage& message) {
  Writer writer;
  writer.u32(message.round).u8(static_cast<std::uint8_t>(message.verdict.kind));
  writer(message.verdict.exit_code, message.verdict.failure, message.verdict.not_restarted, message.verdict.timeline,
         message.verdict.stepped_aside, message.verdict.consequences);
  return writer.take();
}

VerdictMessage decode_verdict(std::string_view payload) {
  Reader reader(payload);
  VerdictMessage message;
  message.round = reader.u32();
  std::uint8_t kind = reader.u8();
  if (kind > 2) throw ProtocolError(fmt::format("unknown verdict kind {}", kind));
  message.verdict.kind = static_cast<Verdict::Kind>(kind);
  reader(message.verdict.exit_code, message.verdict.failure, message.verdict.not_restarted, message.verdict.timeline,
         message.verdict.stepped_aside, message.verdict.consequences);
  reader.finish();
  return message;
}

std::string encode(const ProgressMessage& message) {
  Writer writer;
  writer.u32(message.round).u32(message.idle_ms).u32(static_cast<std::uint32_t>(message.steps.size()));
  for (const auto& step : message.steps) {
    auto value = static_cast<std::uint64_t>(step.step);
    writer.i32(step.rank).u32(static_cast<std::uint32_t>(value >> 32)).u32(static_cast<std::uint32_t>(value));
  }
  return writer.take();
}

ProgressMessage decode_progress(std::string_view payload) {
  Reader reader(payload);
  ProgressMessage message;
  message.round = reader.u32();
  message.idle_ms = reader.u32();
  for (std::uint32_t i = reader.list_size(); i > 0; --i) {
    RankStep step;
    step.rank = reader.i32();
    std::uint64_t high = reader.u32();
    step.step = static_cast<std::int64_t>((high << 32) | reader.u32());
    if (!is_step(step.step))
      throw ProtocolError(fmt::format("progress of rank {} at step {}, outside 0..{}", step.rank, step.step, kMostSteps));
    message.steps.push_back(step);
  }
  reader.finish();
  return message;
}

std::string encode(const CaptureMessage& message) { return encode_message(message); }

CaptureMessage decode_capture(std::string_view payload) { return decode_message<CaptureMessage>(payload); }

std::string encode(const StacksMessage& message) { return encode_message(message); }

StacksMessage decode_stacks(std::string_view payload) { return decode_message<StacksMessage>(payload); }

std::string encode(const ProbeMessage& message) { return encode_message(message); }

ProbeMessage decode_probe(std::string_view payload) {
  auto message = decode_message<ProbeMessage>(payload);
  for (const auto& target : message.targets) {
    if (target.port == 0 || target.port > 65535 || target.address.empty() || target.address.size() > 64)
      throw ProtocolError(fmt::format("bad probe target (slot {}, port {})", target.slot, target.port));
  }
  return message;
}

std::string encode(const ProbeReportMessage& message) { return encode_message(message); }

ProbeReportMessage decode_probe_report(std::string_view payload) {
  return decode_message<ProbeReportMessage>(payload);
}

std::string signed_part(const ProbeHelloMessage& message) {
  Writer writer;
  describe_signed(writer, message);
  return writer.take();
}

std::string probe_ack_signed_part(const std::string& run_id, std::uint32_t slot) {
  Writer writer;
  writer(run_id, slot);
  return writer.take();
}

std::string encode(const ProbeHelloMessage& message) { return encode_message(message); }

ProbeHelloMessage decode_probe_hello(std::string_view payload) {
  auto message = decode_message<ProbeHelloMessage>(payload);
  check_nonce(message.nonce, "probe nonce");
  return message;
}

std::string encode(const ProbeAckMessage& message) { return encode_message(message); }

ProbeAckMessage decode_probe_ack(std::string_view payload) { return decode_message<ProbeAckMessage>(payload); }

std::string encode(const GateMessage& message) { return encode_message(message); }

GateMessage decode_gate(std::string_view payload) {
  auto message = decode_message<GateMessage>(payload);
  check_nonce(message.store_secret, "gate request with a store secret");
  if (message.gate_size == 0 || message.gate_size > kMaxListSize || message.gate_rank >= message.gate_size ||
      message.master_port == 0 || message.master_port > 65535 || message.master_addr.empty() ||
      message.master_addr.size() > 256 || message.ifname.size() > 64)
    throw ProtocolError(fmt::format("bad gate request (rank {} of {}, port {})", message.gate_rank,
                                    message.gate_size, message.master_port));
  return message;
}

std::string encode(const GateReportMessage& message) { return encode_message(message); }

GateReportMessage decode_gate_report(std::string_view payload) { return decode_message<GateReportMessage>(payload); }

}  // namespace dlaunch::rendezvous
