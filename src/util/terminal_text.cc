#include "util/terminal_text.h"

#include <algorithm>

namespace dlaunch::util {

std::string_view visible_of(std::string_view line) {
  while (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  std::size_t last_return = line.rfind('\r');
  return last_return == std::string_view::npos ? line : line.substr(last_return + 1);
}

std::size_t columns_of(std::string_view text) {
  // Every byte but a UTF-8 continuation byte (10xxxxxx) starts a character.
  return static_cast<std::size_t>(std::count_if(
      text.begin(), text.end(), [](char byte) { return (static_cast<unsigned char>(byte) & 0xC0) != 0x80; }));
}

}  // namespace dlaunch::util
