#include "wire/protocol.h"

#include <fmt/format.h>

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

 private:
  void need(std::size_t size) const {
    if (bytes_.size() < size) throw ProtocolError("message is truncated");
  }
  std::string_view bytes_;
};

void write_failure(Writer& writer, const Failure& failure) {
  writer.i32(failure.global_rank).i32(failure.local_rank).i32(failure.node_rank).str(failure.host);
  writer.i32(failure.pid).i32(failure.exit_code).i32(failure.signal).str(failure.time);
  writer.str(failure.log_file).str(failure.error_message).str(failure.description);
  writer.u32(static_cast<std::uint32_t>(failure.last_lines.size()));
  for (const auto& line : failure.last_lines) writer.str(line);
}


Failure read_failure(Reader& reader) {
  Failure failure;
  failure.global_rank = reader.i32();
  failure.local_rank = reader.i32();
  failure.node_rank = reader.i32();
  failure.host = reader.str();
  failure.pid = reader.i32();
  failure.exit_code = reader.i32();
  failure.signal = reader.i32();
  failure.time = reader.str();
  failure.log_file = reader.str();
  failure.error_message = reader.str();
  failure.description = reader.str();
  for (std::uint32_t i = reader.list_size(); i > 0; --i) failure.last_lines.push_back(reader.str());
  return failure;
}

void write_optional_failure(Writer& writer, const std::optional<Failure>& failure) {
  writer.u8(failure ? 1 : 0);
  if (failure) write_failure(writer, *failure);
}

std::optional<Failure> read_optional_failure(Reader& reader) {
  if (reader.u8() == 0) return std::nullopt;
  return read_failure(reader);
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

void write_strings(Writer& writer, const std::vector<std::string>& lines) {
  writer.u32(static_cast<std::uint32_t>(lines.size()));
  for (const auto& line : lines) writer.str(line);
}

std::vector<std::string> read_strings(Reader& reader) {
  std::vector<std::string> lines;
  for (std::uint32_t i = reader.list_size(); i > 0; --i) lines.push_back(reader.str());
  return lines;
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
    write_strings(writer, addresses);
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
    interface.addresses = read_strings(reader);
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
  return frame;
}

std::string encode(const ChallengeMessage& message) {
  Writer writer;
  writer.str(message.nonce).u8(message.token_required ? 1 : 0).u32(message.heartbeat_timeout_ms);
  return writer.take();
}

ChallengeMessage decode_challenge(std::string_view payload) {
  Reader reader(payload);
  ChallengeMessage message;
  message.nonce = reader.str();
  message.token_required = reader.u8() != 0;
  message.heartbeat_timeout_ms = reader.u32();
  reader.finish();
  if (message.nonce.size() != kChallengeSize)
    throw ProtocolError(fmt::format("challenge of {} bytes, expected {}", message.nonce.size(), kChallengeSize));
  return message;
}

std::string signed_part(const JoinMessage& message) {
  Writer writer;
  writer.str(message.run_id).u32(message.round).u32(message.node_rank).u32(message.nnodes);
  writer.u32(message.spare_nodes).u32(message.min_nodes).u32(message.nproc).str(message.host).str(message.dlaunch_version);
  writer.u8(message.allow_uneven ? 1 : 0).str(message.preflight_error).u8(message.observer ? 1 : 0);
  write_interfaces(writer, message.interfaces);
  writer.u32(message.probe_port).u32(message.free_port);
  return writer.take();
}

std::string encode(const JoinMessage& message) {
  Writer writer;
  writer.str(message.proof).str(message.nonce);
  return writer.take() + signed_part(message);
}

JoinMessage decode_join(std::string_view payload) {
  Reader reader(payload);
  JoinMessage message;
  message.proof = reader.str();
  message.nonce = reader.str();
  if (message.nonce.size() != kChallengeSize)
    throw ProtocolError(fmt::format("join nonce of {} bytes, expected {}", message.nonce.size(), kChallengeSize));
  message.run_id = reader.str();
  message.round = reader.u32();
  message.node_rank = reader.u32();
  message.nnodes = reader.u32();
  message.spare_nodes = reader.u32();
  message.min_nodes = reader.u32();
  message.nproc = reader.u32();
  message.host = reader.str();
  message.dlaunch_version = reader.str();
  message.allow_uneven = reader.u8() != 0;
  message.preflight_error = reader.str();
  message.observer = reader.u8() != 0;
  message.interfaces = read_interfaces(reader);
  message.probe_port = reader.u32();
  message.free_port = reader.u32();
  reader.finish();
  if (message.probe_port > 65535 || message.free_port > 65535)
    throw ProtocolError(fmt::format("join names port {} or {}, beyond 65535", message.probe_port, message.free_port));
  return message;
}

std::string encode(const SealedJoinMessage& message) {
  Writer writer;
  writer.str(message.nonce).u32(message.slot).str(message.sealed);
  return writer.take();
}

SealedJoinMessage decode_sealed_join(std::string_view payload) {
  Reader reader(payload);
  SealedJoinMessage message;
  message.nonce = reader.str();
  message.slot = reader.u32();
  message.sealed = reader.str();
  reader.finish();
  if (message.nonce.size() != kChallengeSize)
    throw ProtocolError(fmt::format("sealed join with a nonce of {} bytes, expected {}", message.nonce.size(),
                                    kChallengeSize));
  return message;
}

std::string encode(const WelcomeMessage& message) {
  Writer writer;
  writer.u32(message.heartbeat_timeout_ms);
  return writer.take();
}

WelcomeMessage decode_welcome(std::string_view payload) {
  Reader reader(payload);
  WelcomeMessage message;
  message.heartbeat_timeout_ms = reader.u32();
  reader.finish();
  return message;
}

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
  write_strings(writer, world.addresses);
  write_strings(writer, world.ifnames);
  write_strings(writer, world.ifaddresses);
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
  world.addresses = read_strings(reader);
  world.ifnames = read_strings(reader);
  world.ifaddresses = read_strings(reader);
  reader.finish();
  return world;
}

std::string encode(const TextMessage& message) {
  Writer writer;
  writer.u32(message.round).str(message.reason);
  return writer.take();
}

TextMessage decode_text(std::string_view payload) {
  Reader reader(payload);
  TextMessage message;
  message.round = reader.u32();
  message.reason = reader.str();
  reader.finish();
  return message;
}

std::string encode(const Failure& failure) {
  Writer writer;
  write_failure(writer, failure);
  return writer.take();
}

Failure decode_failure(std::string_view payload) {
  Reader reader(payload);
  Failure failure = read_failure(reader);
  reader.finish();
  return failure;
}

std::string encode(const OutcomeMessage& message) {
  Writer writer;
  writer.u32(message.round).u8(message.outcome.succeeded ? 1 : 0);
  writer.i32(message.outcome.stop_signal).u8(message.outcome.preempted ? 1 : 0);
  write_optional_failure(writer, message.outcome.failure);
  return writer.take();
}

OutcomeMessage decode_outcome(std::string_view payload) {
  Reader reader(payload);
  OutcomeMessage message;
  message.round = reader.u32();
  message.outcome.succeeded = reader.u8() != 0;
  message.outcome.stop_signal = reader.i32();
  message.outcome.preempted = reader.u8() != 0;
  message.outcome.failure = read_optional_failure(reader);
  reader.finish();
  return message;
}

std::string encode(const VerdictMessage& message) {
  Writer writer;
  writer.u32(message.round).u8(static_cast<std::uint8_t>(message.verdict.kind));
  writer.i32(message.verdict.exit_code);
  write_optional_failure(writer, message.verdict.failure);
  writer.str(message.verdict.not_restarted);
  write_strings(writer, message.verdict.timeline);
  writer.u8(message.verdict.stepped_aside ? 1 : 0);
  return writer.take();
}

VerdictMessage decode_verdict(std::string_view payload) {
  Reader reader(payload);
  VerdictMessage message;
  message.round = reader.u32();
  std::uint8_t kind = reader.u8();
  if (kind > 2) throw ProtocolError(fmt::format("unknown verdict kind {}", kind));
  message.verdict.kind = static_cast<Verdict::Kind>(kind);
  message.verdict.exit_code = reader.i32();
  message.verdict.failure = read_optional_failure(reader);
  message.verdict.not_restarted = reader.str();
  message.verdict.timeline = read_strings(reader);
  message.verdict.stepped_aside = reader.u8() != 0;
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

std::string encode(const CaptureMessage& message) {
  Writer writer;
  writer.u32(message.round).u32(message.id).u8(message.hang ? 1 : 0);
  return writer.take();
}

CaptureMessage decode_capture(std::string_view payload) {
  Reader reader(payload);
  CaptureMessage message;
  message.round = reader.u32();
  message.id = reader.u32();
  message.hang = reader.u8() != 0;
  reader.finish();
  return message;
}

std::string encode(const StacksMessage& message) {
  Writer writer;
  writer.u32(message.id).str(message.stacks);
  return writer.take();
}

StacksMessage decode_stacks(std::string_view payload) {
  Reader reader(payload);
  StacksMessage message;
  message.id = reader.u32();
  message.stacks = reader.str();
  reader.finish();
  return message;
}

}  // namespace dlaunch::rendezvous

namespace dlaunch::rendezvous {

std::string encode(const ProbeMessage& message) {
  Writer writer;
  writer.u32(message.round).u32(static_cast<std::uint32_t>(message.targets.size()));
  for (const auto& target : message.targets) writer.u32(target.slot).str(target.address).u32(target.port);
  return writer.take();
}

ProbeMessage decode_probe(std::string_view payload) {
  Reader reader(payload);
  ProbeMessage message;
  message.round = reader.u32();
  for (std::uint32_t i = reader.list_size(); i > 0; --i) {
    ProbeTarget target;
    target.slot = reader.u32();
    target.address = reader.str();
    target.port = reader.u32();
    if (target.port == 0 || target.port > 65535 || target.address.empty() || target.address.size() > 64)
      throw ProtocolError(fmt::format("bad probe target (slot {}, port {})", target.slot, target.port));
    message.targets.push_back(std::move(target));
  }
  reader.finish();
  return message;
}

std::string encode(const ProbeReportMessage& message) {
  Writer writer;
  writer.u32(message.round).u32(static_cast<std::uint32_t>(message.outcomes.size()));
  for (const auto& outcome : message.outcomes) writer.u32(outcome.slot).str(outcome.address).u8(outcome.reached ? 1 : 0);
  return writer.take();
}

ProbeReportMessage decode_probe_report(std::string_view payload) {
  Reader reader(payload);
  ProbeReportMessage message;
  message.round = reader.u32();
  for (std::uint32_t i = reader.list_size(); i > 0; --i) {
    ProbeOutcome outcome;
    outcome.slot = reader.u32();
    outcome.address = reader.str();
    outcome.reached = reader.u8() != 0;
    message.outcomes.push_back(std::move(outcome));
  }
  reader.finish();
  return message;
}

std::string signed_part(const ProbeHelloMessage& message) {
  Writer writer;
  writer.str(message.run_id).u32(message.from_slot).u32(message.to_slot);
  return writer.take();
}

std::string probe_ack_signed_part(const std::string& run_id, std::uint32_t slot) {
  Writer writer;
  writer.str(run_id).u32(slot);
  return writer.take();
}

std::string encode(const ProbeHelloMessage& message) {
  Writer writer;
  writer.str(message.nonce).str(message.proof);
  return writer.take() + signed_part(message);
}

ProbeHelloMessage decode_probe_hello(std::string_view payload) {
  Reader reader(payload);
  ProbeHelloMessage message;
  message.nonce = reader.str();
  message.proof = reader.str();
  message.run_id = reader.str();
  message.from_slot = reader.u32();
  message.to_slot = reader.u32();
  reader.finish();
  if (message.nonce.size() != kChallengeSize)
    throw ProtocolError(fmt::format("probe nonce of {} bytes, expected {}", message.nonce.size(), kChallengeSize));
  return message;
}

std::string encode(const ProbeAckMessage& message) {
  Writer writer;
  writer.u32(message.slot).str(message.proof);
  return writer.take();
}

ProbeAckMessage decode_probe_ack(std::string_view payload) {
  Reader reader(payload);
  ProbeAckMessage message;
  message.slot = reader.u32();
  message.proof = reader.str();
  reader.finish();
  return message;
}

std::string encode(const GateMessage& message) {
  Writer writer;
  writer.u32(message.round).u32(message.gate_rank).u32(message.gate_size).str(message.master_addr);
  writer.u32(message.master_port).u32(message.pair_bytes).u32(message.timeout_ms).str(message.ifname);
  writer.str(message.store_secret);
  return writer.take();
}

GateMessage decode_gate(std::string_view payload) {
  Reader reader(payload);
  GateMessage message;
  message.round = reader.u32();
  message.gate_rank = reader.u32();
  message.gate_size = reader.u32();
  message.master_addr = reader.str();
  message.master_port = reader.u32();
  message.pair_bytes = reader.u32();
  message.timeout_ms = reader.u32();
  message.ifname = reader.str();
  message.store_secret = reader.str();
  reader.finish();
  if (message.store_secret.size() != kChallengeSize)
    throw ProtocolError(fmt::format("gate request with a store secret of {} bytes, expected {}",
                                    message.store_secret.size(), kChallengeSize));
  if (message.gate_size == 0 || message.gate_size > kMaxListSize || message.gate_rank >= message.gate_size ||
      message.master_port == 0 || message.master_port > 65535 || message.master_addr.empty() ||
      message.master_addr.size() > 256 || message.ifname.size() > 64)
    throw ProtocolError(fmt::format("bad gate request (rank {} of {}, port {})", message.gate_rank,
                                    message.gate_size, message.master_port));
  return message;
}

std::string encode(const GateReportMessage& message) {
  Writer writer;
  writer.i32(message.exit_code).str(message.line).str(message.error);
  return writer.take();
}

GateReportMessage decode_gate_report(std::string_view payload) {
  Reader reader(payload);
  GateReportMessage message;
  message.exit_code = reader.i32();
  message.line = reader.str();
  message.error = reader.str();
  reader.finish();
  return message;
}

}  // namespace dlaunch::rendezvous
