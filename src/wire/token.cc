#include "wire/token.h"

#include <fmt/format.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "util/error.h"

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
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
           reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest, &size) == nullptr)
    throw util::SystemError("cannot compute the rendezvous proof: OpenSSL's HMAC-SHA256 failed");
  return std::string(reinterpret_cast<const char*>(digest), size);
}

std::string random_bytes(std::size_t size) {
  std::string bytes(size, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(bytes.data()), static_cast<int>(size)) != 1)
    throw util::SystemError("cannot draw random bytes for the rendezvous: OpenSSL's RAND_bytes failed");
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
         CRYPTO_memcmp(expected.data(), given.data(), expected.size()) == 0;
}

std::string derive_token(std::string_view run_id, std::string_view job_id, unsigned user_id) {
  return hex(hmac_sha256("dlaunch derived rendezvous token v1",
                         fmt::format("{}\n{}\n{}", run_id, job_id, user_id)));
}

}  // namespace dlaunch::rendezvous
