// The protection of one connection to the pre-start gate's store (and any
// store given a secret): a mutual handshake, then every message sealed.
//
// Without it, any local user who saw the gate's listener could post a
// forged outcome ("rank 2 did not arrive") and bench a healthy node, or
// fill the store. With a secret, the store greets each connection with a
// random challenge; the client answers with a nonce of its own and an
// HMAC-SHA256 of both under the secret; from then on each direction seals
// its messages (ChaCha20-Poly1305, wire/aead.h) under a key derived from
// the secret and both nonces, with a per-direction counter. The store's
// first sealed message is its proof to the client. The secret never
// crosses the wire; libsodium does all the cryptography.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "wire/aead.h"

namespace dlaunch::collective {

// Bytes of the challenge and of the nonce.
inline constexpr std::size_t kStoreNonceSize = 32;
// The longest sealed record accepted: a message of the longest field.
inline constexpr std::uint32_t kMaxSealedRecord = (16u << 20) + 1024;

// The client's proof of SECRET on the connection of CHALLENGE and NONCE.
std::string store_proof(std::string_view secret, std::string_view challenge, std::string_view nonce);

class StoreSeal {
 public:
  enum class End { kStore, kClient };
  StoreSeal(std::string_view secret, std::string_view challenge, std::string_view nonce, End end);

  // MESSAGE sealed as the next record of this end: length, then ciphertext.
  std::string seal(std::string_view message);
  // Takes the whole records at the front of RAW off it and appends their
  // plaintext to PLAIN. Throws SystemError on a record that does not open
  // (forged, altered, replayed) or that announces more than
  // kMaxSealedRecord.
  void open_into(std::string& raw, std::string& plain);

 private:
  rendezvous::AeadChannel channel_;
};

}  // namespace dlaunch::collective
