#include "wire/aead.h"

#include <array>
#include <sodium.h>

#include "util/error.h"
#include "wire/sodium_init.h"

namespace dlaunch::rendezvous {
namespace {

static_assert(kAeadKeySize == crypto_aead_chacha20poly1305_ietf_KEYBYTES);
static_assert(kAeadTagSize == crypto_aead_chacha20poly1305_ietf_ABYTES);

// The IETF construction's 96-bit nonce: four zero bytes, then the counter
// big-endian.
std::array<unsigned char, crypto_aead_chacha20poly1305_ietf_NPUBBYTES> nonce_of(std::uint64_t counter) {
  std::array<unsigned char, crypto_aead_chacha20poly1305_ietf_NPUBBYTES> nonce{};
  for (int i = 0; i < 8; ++i) nonce[static_cast<std::size_t>(4 + i)] = static_cast<unsigned char>(counter >> (56 - 8 * i));
  return nonce;
}

const unsigned char* bytes(std::string_view text) { return reinterpret_cast<const unsigned char*>(text.data()); }
unsigned char* bytes(std::string& text) { return reinterpret_cast<unsigned char*>(text.data()); }

void check_key(std::string_view key) {
  if (key.size() != kAeadKeySize) throw util::SystemError("rendezvous encryption: a key of the wrong size");
}

}  // namespace

std::string aead_seal(std::string_view key, std::uint64_t counter, std::string_view associated,
                      std::string_view plaintext) {
  check_key(key);
  ensure_sodium();
  auto nonce = nonce_of(counter);
  std::string sealed(plaintext.size() + kAeadTagSize, '\0');
  unsigned long long written = 0;
  if (crypto_aead_chacha20poly1305_ietf_encrypt(bytes(sealed), &written, bytes(plaintext), plaintext.size(),
                                                bytes(associated), associated.size(), nullptr, nonce.data(),
                                                bytes(key)) != 0 ||
      written != sealed.size())
    throw util::SystemError("cannot encrypt a rendezvous message: libsodium's ChaCha20-Poly1305 failed");
  return sealed;
}

std::optional<std::string> aead_open(std::string_view key, std::uint64_t counter, std::string_view associated,
                                     std::string_view sealed) {
  check_key(key);
  ensure_sodium();
  if (sealed.size() < kAeadTagSize) return std::nullopt;
  auto nonce = nonce_of(counter);
  std::string plaintext(sealed.size() - kAeadTagSize, '\0');
  unsigned long long written = 0;
  // The tag is checked here, in constant time, by libsodium; nothing of a
  // message that fails it is returned.
  if (crypto_aead_chacha20poly1305_ietf_decrypt(bytes(plaintext), &written, nullptr, bytes(sealed), sealed.size(),
                                                bytes(associated), associated.size(), nonce.data(),
                                                bytes(key)) != 0)
    return std::nullopt;
  plaintext.resize(static_cast<std::size_t>(written));
  return plaintext;
}

}  // namespace dlaunch::rendezvous
