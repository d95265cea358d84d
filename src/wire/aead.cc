#include "wire/aead.h"

#include <array>
#include <memory>
#include <openssl/evp.h>

#include "util/error.h"

namespace dlaunch::rendezvous {
namespace {

using CipherContext = std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)>;

CipherContext new_context() {
  CipherContext context(EVP_CIPHER_CTX_new(), &EVP_CIPHER_CTX_free);
  if (!context) throw util::SystemError("cannot encrypt the rendezvous: OpenSSL could not allocate a cipher");
  return context;
}

// GCM's 96-bit nonce: four zero bytes, then the counter big-endian.
std::array<unsigned char, 12> nonce_of(std::uint64_t counter) {
  std::array<unsigned char, 12> nonce{};
  for (int i = 0; i < 8; ++i) nonce[static_cast<std::size_t>(4 + i)] = static_cast<unsigned char>(counter >> (56 - 8 * i));
  return nonce;
}

const unsigned char* bytes(std::string_view text) { return reinterpret_cast<const unsigned char*>(text.data()); }
unsigned char* bytes(std::string& text) { return reinterpret_cast<unsigned char*>(text.data()); }
int size_of(std::string_view text) { return static_cast<int>(text.size()); }

void check_key(std::string_view key) {
  if (key.size() != kAeadKeySize) throw util::SystemError("rendezvous encryption: a key of the wrong size");
}

}  // namespace

std::string aead_seal(std::string_view key, std::uint64_t counter, std::string_view associated,
                      std::string_view plaintext) {
  check_key(key);
  CipherContext context = new_context();
  auto nonce = nonce_of(counter);
  std::string sealed(plaintext.size() + kAeadTagSize, '\0');
  int written = 0;
  bool ok = EVP_EncryptInit_ex(context.get(), EVP_aes_256_gcm(), nullptr, bytes(key), nonce.data()) == 1 &&
            EVP_EncryptUpdate(context.get(), nullptr, &written, bytes(associated), size_of(associated)) == 1 &&
            EVP_EncryptUpdate(context.get(), bytes(sealed), &written, bytes(plaintext), size_of(plaintext)) == 1 &&
            EVP_EncryptFinal_ex(context.get(), bytes(sealed) + written, &written) == 1 &&
            EVP_CIPHER_CTX_ctrl(context.get(), EVP_CTRL_GCM_GET_TAG, static_cast<int>(kAeadTagSize),
                                bytes(sealed) + plaintext.size()) == 1;
  if (!ok) throw util::SystemError("cannot encrypt a rendezvous message: OpenSSL's AES-256-GCM failed");
  return sealed;
}

std::optional<std::string> aead_open(std::string_view key, std::uint64_t counter, std::string_view associated,
                                     std::string_view sealed) {
  check_key(key);
  if (sealed.size() < kAeadTagSize) return std::nullopt;
  std::string_view ciphertext = sealed.substr(0, sealed.size() - kAeadTagSize);
  std::string tag(sealed.substr(ciphertext.size()));
  CipherContext context = new_context();
  auto nonce = nonce_of(counter);
  std::string plaintext(ciphertext.size(), '\0');
  int written = 0;
  bool ok = EVP_DecryptInit_ex(context.get(), EVP_aes_256_gcm(), nullptr, bytes(key), nonce.data()) == 1 &&
            EVP_DecryptUpdate(context.get(), nullptr, &written, bytes(associated), size_of(associated)) == 1 &&
            EVP_DecryptUpdate(context.get(), bytes(plaintext), &written, bytes(ciphertext), size_of(ciphertext)) == 1 &&
            EVP_CIPHER_CTX_ctrl(context.get(), EVP_CTRL_GCM_SET_TAG, static_cast<int>(kAeadTagSize), bytes(tag)) == 1;
  // The tag is checked here, in constant time, by OpenSSL.
  if (!ok || EVP_DecryptFinal_ex(context.get(), bytes(plaintext) + written, &written) != 1) return std::nullopt;
  return plaintext;
}

}  // namespace dlaunch::rendezvous
