#include "rendezvous/session.h"

#include "rendezvous/token.h"

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

constexpr std::string_view kToLauncher = "dlaunch rendezvous v3 service to launcher\n";
constexpr std::string_view kToService = "dlaunch rendezvous v3 launcher to service\n";

}  // namespace

Session::Session(std::string_view token, std::string_view service_nonce,
                 std::string_view launcher_nonce, End end) {
  std::string to_launcher = direction_key(token, kToLauncher, service_nonce, launcher_nonce);
  std::string to_service = direction_key(token, kToService, service_nonce, launcher_nonce);
  send_key_ = end == End::kService ? to_launcher : to_service;
  receive_key_ = end == End::kService ? to_service : to_launcher;
}

std::string Session::tag(const std::string& key, std::uint64_t counter, MessageType type,
                         std::uint32_t generation, std::string_view payload) const {
  std::string data;
  data.reserve(13 + payload.size());
  for (int shift = 56; shift >= 0; shift -= 8) data.push_back(static_cast<char>(counter >> shift));
  data.push_back(static_cast<char>(type));
  for (int shift = 24; shift >= 0; shift -= 8) data.push_back(static_cast<char>(generation >> shift));
  data.append(payload);
  return hmac_sha256(key, data);
}

std::string Session::frame(MessageType type, std::string_view payload, std::uint32_t generation) {
  if (!sealed()) return encode_frame(type, payload, generation);
  std::string sealed_payload(payload);
  sealed_payload.append(tag(send_key_, sent_++, type, generation, payload));
  return encode_frame(type, sealed_payload, generation);
}

std::string Session::open(const Frame& frame) {
  if (!sealed()) return frame.payload;
  if (frame.payload.size() < kTagSize)
    throw ProtocolError("a message without its authentication tag (the peer does not hold the job's token)");
  std::string_view payload(frame.payload);
  std::string_view given = payload.substr(payload.size() - kTagSize);
  payload.remove_suffix(kTagSize);
  if (!proofs_match(tag(receive_key_, received_, frame.type, frame.generation, payload), given))
    throw ProtocolError("a message failed authentication (forged, altered or replayed: the peer does "
                        "not hold the job's token)");
  ++received_;
  return std::string(payload);
}

}  // namespace dlaunch::rendezvous
