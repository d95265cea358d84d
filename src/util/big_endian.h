// Four-byte big-endian lengths, as the check's store and its sealed records
// frame their fields (collective/tcp_store.cc, collective/store_seal.cc).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace dlaunch::util {

inline void put_u32(std::string& out, std::uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((value >> shift) & 0xff));
}

// The first four bytes of BYTES, which the caller has checked are there.
inline std::uint32_t get_u32(std::string_view bytes) {
  std::uint32_t value = 0;
  for (std::size_t i = 0; i < 4; ++i) value = (value << 8) | static_cast<unsigned char>(bytes[i]);
  return value;
}

}  // namespace dlaunch::util
