// Authenticated encryption of one message (ChaCha20-Poly1305, the IETF
// construction, from libsodium): what keeps a rendezvous connection's frames confidential and
// unforgeable once both ends hold the session keys (wire/session.h).
//
// Each key serves one direction of one connection, and each message under it
// has its own counter, which becomes the nonce: a (key, nonce) pair is
// never used twice, which is the one rule the construction needs. The associated data
// (the frame's type and generation) is authenticated, not encrypted: the
// frame header must stay readable to find the frame's end.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace dlaunch::rendezvous {

// Bytes of the key, and of the tag the construction appends to every sealed message.
inline constexpr std::size_t kAeadKeySize = 32;
inline constexpr std::size_t kAeadTagSize = 16;

// PLAINTEXT encrypted under KEY (kAeadKeySize bytes) as message COUNTER,
// ASSOCIATED authenticated with it: the ciphertext, then the tag.
std::string aead_seal(std::string_view key, std::uint64_t counter, std::string_view associated,
                      std::string_view plaintext);

// The plaintext of SEALED (as aead_seal made it), or nullopt when the tag
// does not match: the message was forged, altered, or sealed under another
// key, counter or associated data.
std::optional<std::string> aead_open(std::string_view key, std::uint64_t counter, std::string_view associated,
                                     std::string_view sealed);

// One connection's two directions, each under its own key, with the count
// of messages each way as the counter: both ends know the next counter
// without sending it, and a message replayed, dropped or reordered fails
// to open. Used by the rendezvous Session and the check's store alike.
class AeadChannel {
 public:
  AeadChannel() = default;  // unkeyed: nothing is sealed
  AeadChannel(std::string send_key, std::string receive_key)
      : send_key_(std::move(send_key)), receive_key_(std::move(receive_key)) {}

  bool keyed() const { return !send_key_.empty(); }
  // PLAINTEXT sealed as the next message sent.
  std::string seal(std::string_view associated, std::string_view plaintext) {
    return aead_seal(send_key_, sent_++, associated, plaintext);
  }
  // SEALED opened as the next message received; nullopt (and the count
  // unchanged) when it does not open.
  std::optional<std::string> open(std::string_view associated, std::string_view sealed) {
    auto plain = aead_open(receive_key_, received_, associated, sealed);
    if (plain) ++received_;
    return plain;
  }

 private:
  std::string send_key_;
  std::string receive_key_;
  std::uint64_t sent_ = 0;
  std::uint64_t received_ = 0;
};

}  // namespace dlaunch::rendezvous
