#include "launch/error_file.h"

#include <fstream>
#include <nlohmann/json.hpp>

namespace dlaunch::launch {

std::string read_error_file_message(const std::string& path) {
  std::ifstream file(path);
  if (!file) return "";
  auto document = nlohmann::json::parse(file, nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded() || !document.is_object()) return "";
  auto message = document.find("message");
  if (message == document.end()) return "";
  if (message->is_string()) return message->get<std::string>();
  if (message->is_object()) {
    auto inner = message->find("message");
    if (inner != message->end() && inner->is_string()) return inner->get<std::string>();
  }
  return "";
}

}  // namespace dlaunch::launch
