// Authenticated encryption of one message (AES-256-GCM from OpenSSL's
// libcrypto): what keeps a rendezvous connection's frames confidential and
// unforgeable once both ends hold the session keys (wire/session.h).
//
// Each key serves one direction of one connection, and each message under it
// has its own counter, which becomes the GCM nonce: a (key, nonce) pair is
// never used twice, which is the one rule GCM needs. The associated data
// (the frame's type and generation) is authenticated, not encrypted: the
// frame header must stay readable to find the frame's end.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace dlaunch::rendezvous {

// Bytes of the key, and of the tag GCM appends to every sealed message.
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

}  // namespace dlaunch::rendezvous
