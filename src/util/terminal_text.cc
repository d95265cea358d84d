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

std::string update_of_open_line(std::string_view prefix, std::string_view shown, std::string_view visible) {
  std::string update;
  if (!shown.empty() && visible.starts_with(shown)) {
    update.assign(visible.substr(shown.size()));
    return update;
  }
  update.reserve(1 + prefix.size() + visible.size());
  update.push_back('\r');
  update.append(prefix);
  update.append(visible);
  std::size_t old_columns = columns_of(shown);
  std::size_t new_columns = columns_of(visible);
  if (old_columns > new_columns) update.append(old_columns - new_columns, ' ');
  return update;
}

}  // namespace dlaunch::util
