#include "wire/token.h"

#include <fmt/format.h>
#include <sodium.h>

#include "util/error.h"
#include "wire/sodium_init.h"

namespace dlaunch::rendezvous {
namespace {

std::string hex(std::string_view bytes) {
  std::string text;
  text.reserve(bytes.size() * 2);
  for (unsigned char byte : bytes) text += fmt::format("{:02x}", byte);
  return text;
}

}  // namespace

std::string hmac_sha256(std::string_view key, std::string_view data) {
  ensure_sodium();
  // HMAC as RFC 2104 defines it, for a key of any length (a longer one is
  // hashed first): the same digests OpenSSL gave, so tokens, proofs and
  // derived tokens are unchanged.
  crypto_auth_hmacsha256_state state;
  unsigned char digest[crypto_auth_hmacsha256_BYTES];
  if (crypto_auth_hmacsha256_init(&state, reinterpret_cast<const unsigned char*>(key.data()), key.size()) != 0 ||
      crypto_auth_hmacsha256_update(&state, reinterpret_cast<const unsigned char*>(data.data()), data.size()) != 0 ||
      crypto_auth_hmacsha256_final(&state, digest) != 0)
    throw util::SystemError("cannot compute the rendezvous proof: libsodium's HMAC-SHA256 failed");
  sodium_memzero(&state, sizeof state);
  return std::string(reinterpret_cast<const char*>(digest), sizeof digest);
}

std::string random_bytes(std::size_t size) {
  ensure_sodium();
  std::string bytes(size, '\0');
  randombytes_buf(bytes.data(), size);
  return bytes;
}

std::string generate_token() { return hex(random_bytes(32)); }

std::string join_proof(std::string_view token, std::string_view challenge, std::string_view nonce,
                       std::string_view message) {
  // A label keeps this HMAC apart from every other use of the token; the
  // nonces are fixed-size, so label||challenge||nonce||message is unambiguous.
  std::string data("dlaunch rendezvous v3 join\n");
  data.append(challenge);
  data.append(nonce);
  data.append(message);
  return hmac_sha256(token, data);
}

std::string probe_proof(std::string_view token, std::string_view label, std::string_view challenge,
                        std::string_view nonce, std::string_view message) {
  // Labels end in a newline and the nonces are fixed-size: unambiguous.
  std::string data = fmt::format("dlaunch rendezvous v6 probe {}\n", label);
  data.append(challenge);
  data.append(nonce);
  data.append(message);
  return hmac_sha256(token, data);
}

bool proofs_match(std::string_view expected, std::string_view given) {
  return expected.size() == given.size() &&
         sodium_memcmp(expected.data(), given.data(), expected.size()) == 0;
}

std::string derive_token(std::string_view run_id, std::string_view job_id, unsigned user_id) {
  return hex(hmac_sha256("dlaunch derived rendezvous token v1",
                         fmt::format("{}\n{}\n{}", run_id, job_id, user_id)));
}

}  // namespace dlaunch::rendezvous
