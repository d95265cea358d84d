// One rendezvous connection's protection: with a token, every frame from the
// Join on, both ways, is encrypted and authenticated (ChaCha20-Poly1305,
// wire/aead.h), so what crosses the wire (hosts, the World, every
// rank's stacks) is readable by the two ends only.
//
// Each direction has its own key, derived from the job's token and the
// connection's two nonces (node 0's challenge and the launcher's nonce), and
// its own frame counter, which seals each frame as a distinct message. So
// only a holder of the token can produce a frame the other end accepts; a
// frame recorded on another connection, replayed, reordered, dropped or
// reflected back to its sender fails to open. The Welcome, node 0's first
// sealed frame, is therefore its proof to the launcher that it holds the
// token (mutual authentication).
//
// Without a token a Session is unsealed: frames pass as they are, and
// nothing is protected (docs/RELIABILITY.md, threat model).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "wire/aead.h"
#include "wire/protocol.h"

namespace dlaunch::rendezvous {

// Which end of the connection a Session serves.
enum class End { kService, kLauncher };


class Session {
 public:
  // Unsealed: no token.
  Session() = default;
  // Sealed with keys derived from TOKEN and the connection's nonces.
  Session(std::string_view token, std::string_view service_nonce, std::string_view launcher_nonce,
          End end);

  bool sealed() const { return channel_.keyed(); }

  // The whole frame of TYPE carrying PAYLOAD in GENERATION (the sender's
  // round), sealed when the session is: the seal covers type and generation.
  std::string frame(MessageType type, std::string_view payload, std::uint32_t generation = 0);
  // PAYLOAD sealed as the next frame of TYPE in GENERATION: for a frame
  // whose payload holds more than the sealed part (the Join's nonce).
  // Requires sealed().
  std::string seal(MessageType type, std::string_view payload, std::uint32_t generation);
  // FRAME's payload, opened when sealed. Throws ProtocolError when it does
  // not open (a frame forged, altered, replayed or out of order).
  std::string open(const Frame& frame);
  // The same for the sealed part SEALED of a frame of TYPE in GENERATION.
  std::string open(MessageType type, std::uint32_t generation, std::string_view sealed);

 private:

  AeadChannel channel_;
};

}  // namespace dlaunch::rendezvous
