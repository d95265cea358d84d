#include "wire/session.h"

#include "wire/aead.h"
#include "wire/token.h"

namespace dlaunch::rendezvous {
namespace {

// One key per direction, so a frame reflected back to its sender fails.
std::string direction_key(std::string_view token, std::string_view label,
                          std::string_view service_nonce, std::string_view launcher_nonce) {
  std::string data(label);
  data.append(service_nonce);
  data.append(launcher_nonce);
  return hmac_sha256(token, data);
}

constexpr std::string_view kToLauncher = "dlaunch rendezvous v8 service to launcher\n";
constexpr std::string_view kToService = "dlaunch rendezvous v8 launcher to service\n";

}  // namespace

Session::Session(std::string_view token, std::string_view service_nonce,
                 std::string_view launcher_nonce, End end) {
  std::string to_launcher = direction_key(token, kToLauncher, service_nonce, launcher_nonce);
  std::string to_service = direction_key(token, kToService, service_nonce, launcher_nonce);
  channel_ = end == End::kService ? AeadChannel(to_launcher, to_service) : AeadChannel(to_service, to_launcher);
}

namespace {

// What the seal authenticates besides the payload: the frame's type and
// generation, which travel in its clear header.
std::string associated_data(MessageType type, std::uint32_t generation) {
  std::string data(1, static_cast<char>(type));
  for (int shift = 24; shift >= 0; shift -= 8) data.push_back(static_cast<char>(generation >> shift));
  return data;
}

}  // namespace

std::string Session::seal(MessageType type, std::string_view payload, std::uint32_t generation) {
  return channel_.seal(associated_data(type, generation), payload);
}

std::string Session::frame(MessageType type, std::string_view payload, std::uint32_t generation) {
  if (!sealed()) return encode_frame(type, payload, generation);
  return encode_frame(type, seal(type, payload, generation), generation);
}

std::string Session::open(const Frame& frame) {
  if (!sealed()) return frame.payload;
  return open(frame.type, frame.generation, frame.payload);
}

std::string Session::open(MessageType type, std::uint32_t generation, std::string_view sealed) {
  auto payload = channel_.open(associated_data(type, generation), sealed);
  if (!payload)
    throw ProtocolError("a message failed authentication (forged, altered or replayed: the peer does "
                        "not hold the job's token)");
  return std::move(*payload);
}

}  // namespace dlaunch::rendezvous
