#include "collective/store_seal.h"

#include "util/big_endian.h"
#include "util/error.h"
#include "wire/aead.h"
#include "wire/token.h"

namespace dlaunch::collective {
namespace {

// Labels end in a newline and the nonces are fixed-size: unambiguous, and
// apart from every rendezvous use of a token.
std::string derive(std::string_view secret, std::string_view label, std::string_view challenge,
                   std::string_view nonce) {
  std::string data(label);
  data.append(challenge);
  data.append(nonce);
  return rendezvous::hmac_sha256(secret, data);
}

constexpr std::string_view kToClient = "dlaunch store v1 store to client\n";
constexpr std::string_view kToStore = "dlaunch store v1 client to store\n";

using util::get_u32;
using util::put_u32;

}  // namespace

std::string store_proof(std::string_view secret, std::string_view challenge, std::string_view nonce) {
  return derive(secret, "dlaunch store v1 client proof\n", challenge, nonce);
}

StoreSeal::StoreSeal(std::string_view secret, std::string_view challenge, std::string_view nonce, End end) {
  std::string to_client = derive(secret, kToClient, challenge, nonce);
  std::string to_store = derive(secret, kToStore, challenge, nonce);
  channel_ = end == End::kStore ? rendezvous::AeadChannel(to_client, to_store)
                                : rendezvous::AeadChannel(to_store, to_client);
}

std::string StoreSeal::seal(std::string_view message) {
  std::string sealed = channel_.seal("", message);
  std::string record;
  record.reserve(4 + sealed.size());
  put_u32(record, static_cast<std::uint32_t>(sealed.size()));
  record.append(sealed);
  return record;
}

void StoreSeal::open_into(std::string& raw, std::string& plain) {
  std::size_t used = 0;
  while (raw.size() - used >= 4) {
    std::uint32_t size = get_u32(std::string_view(raw).substr(used));
    if (size > kMaxSealedRecord) throw util::SystemError("a sealed store record over the size limit");
    if (raw.size() - used - 4 < size) break;
    auto opened = channel_.open("", std::string_view(raw).substr(used + 4, size));
    if (!opened) throw util::SystemError("a store message failed authentication (the peer does not hold the secret)");
    plain.append(*opened);
    used += 4 + size;
  }
  raw.erase(0, used);
}

}  // namespace dlaunch::collective
