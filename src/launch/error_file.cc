#include "launch/error_file.h"

#include "util/bounded_json.h"
#include "util/outside_file.h"

namespace dlaunch::launch {
namespace {

// MESSAGE, at most kMaxErrorMessageBytes of it. The parser took only valid
// UTF-8, and the cut keeps it so (result.json's writer refuses anything
// else): it falls before a character, never inside one.
std::string cut(std::string message) {
  if (message.size() <= kMaxErrorMessageBytes) return message;
  std::size_t end = kMaxErrorMessageBytes;
  while (end > 0 && (static_cast<unsigned char>(message[end]) & 0xC0) == 0x80) --end;
  message.resize(end);
  message.append(" [cut]");
  return message;
}

}  // namespace

std::string error_file_message(const std::string& text) {
  nlohmann::json document = util::parse_json_bounded(text);
  if (document.is_discarded() || !document.is_object()) return "";
  auto message = document.find("message");
  if (message == document.end()) return "";
  if (message->is_string()) return cut(message->get<std::string>());
  if (message->is_object()) {
    auto inner = message->find("message");
    if (inner != message->end() && inner->is_string()) return cut(inner->get<std::string>());
  }
  return "";
}

std::string read_error_file_message(const std::string& path) {
  // torch writes the file itself (a plain file at the path dlaunch chose):
  // a link there is refused like the rest.
  try {
    auto text = util::read_outside_file(path, {"a worker's error file (JSON)", kMaxErrorFileBytes,
                                               util::Links::kRefuse});
    return text ? error_file_message(*text) : "";
  } catch (const std::exception&) {
    return "";
  }
}

}  // namespace dlaunch::launch
