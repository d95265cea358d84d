// One rendezvous connection's protection once the Join has been made: with a
// token, every frame after it, both ways, carries an HMAC-SHA256 tag.
//
// Each direction has its own key, derived from the job's token and the
// connection's two nonces (node 0's challenge and the launcher's nonce), and
// its own frame counter, which the tag covers. So only a holder of the token
// can produce a frame the other end accepts; a frame recorded on another
// connection, replayed, reordered, dropped or reflected back to its sender
// fails its tag. The Welcome, node 0's first sealed frame, is therefore its
// proof to the launcher that it holds the token (mutual authentication).
//
// Without a token a Session is unsealed: frames pass as they are, and
// nothing is protected (docs/RELIABILITY.md, threat model).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "rendezvous/protocol.h"

namespace dlaunch::rendezvous {

// Which end of the connection a Session serves.
enum class End { kService, kLauncher };

// Bytes of the tag at the end of every sealed payload.
inline constexpr std::size_t kTagSize = 32;

class Session {
 public:
  // Unsealed: no token.
  Session() = default;
  // Sealed with keys derived from TOKEN and the connection's nonces.
  Session(std::string_view token, std::string_view service_nonce, std::string_view launcher_nonce,
          End end);

  bool sealed() const { return !send_key_.empty(); }

  // The whole frame of TYPE carrying PAYLOAD in GENERATION (the sender's
  // round), tagged when sealed: the tag covers the generation too.
  std::string frame(MessageType type, std::string_view payload, std::uint32_t generation = 0);
  // FRAME's payload, its tag checked and removed when sealed. Throws
  // ProtocolError when the tag is missing or does not match (a frame
  // forged, altered, replayed or out of order).
  std::string open(const Frame& frame);

 private:
  std::string tag(const std::string& key, std::uint64_t counter, MessageType type, std::uint32_t generation,
                  std::string_view payload) const;

  std::string send_key_;
  std::string receive_key_;
  std::uint64_t sent_ = 0;
  std::uint64_t received_ = 0;
};

}  // namespace dlaunch::rendezvous
