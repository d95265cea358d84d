#include "wire/service_endpoint.h"

#include <filesystem>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <vector>

#include "util/atomic_file.h"
#include "util/bounded_json.h"
#include "util/error.h"
#include "util/outside_file.h"
#include "util/socket.h"

namespace dlaunch::rendezvous {
namespace {

namespace fs = std::filesystem;

// An endpoint file is a few hundred bytes; anything much bigger is not one.
constexpr std::size_t kLargestEndpointFile = 64 * 1024;

// The endpoint at PATH; nullopt when it went away since it was found.
// Read once, as the open file is (util/outside_file.h): the folder may be
// shared or copied, so PATH may hold a FIFO (a blocking open would hang
// `dlaunch stacks`), a planted link (dlaunch writes this file itself) or
// gigabytes, and the JSON may nest deep enough to overflow the stack.
std::optional<ServiceEndpoint> read_endpoint(const fs::path& path) {
  auto text = util::read_outside_file(
      path.string(), {"a rendezvous endpoint file dlaunch wrote (JSON)", kLargestEndpointFile, util::Links::kRefuse});
  if (!text) return std::nullopt;
  std::string why;
  auto json = util::parse_json_bounded(*text, &why);
  bool valid = json.is_object() && json.value("address", nlohmann::json()).is_string() &&
               json.value("port", nlohmann::json()).is_number_integer();
  if (!valid) {
    if (why.empty()) why = "no string 'address' and integer 'port'";
    throw util::InputError(fmt::format("{} is not a rendezvous endpoint file ({}): expected JSON with "
                                       "'address' and 'port' as dlaunch writes it. Remove it or put the right "
                                       "file there",
                                       path.string(), why));
  }
  ServiceEndpoint endpoint;
  endpoint.address = json["address"].get<std::string>();
  endpoint.port = json["port"].get<int>();
  if (json.value("run_id", nlohmann::json()).is_string()) endpoint.run_id = json["run_id"].get<std::string>();
  if (json.value("host", nlohmann::json()).is_string()) endpoint.host = json["host"].get<std::string>();
  if (json.value("ip", nlohmann::json()).is_string()) endpoint.ip = json["ip"].get<std::string>();
  if (endpoint.port < 1 || endpoint.port > 65535 || endpoint.address.empty())
    throw util::InputError(fmt::format("{} names no usable address and port", path.string()));
  return endpoint;
}

}  // namespace

std::string numeric_address(const std::string& address, int port) {
  try {
    auto resolved = util::resolve_tcp(address, port);
    if (resolved.empty()) return "";
    std::string text = resolved.front().text;  // "10.0.0.1:29500", "[fe80::1]:29500"
    text = text.substr(0, text.rfind(':'));
    if (text.size() >= 2 && text.front() == '[') text = text.substr(1, text.size() - 2);
    return text;
  } catch (const util::SystemError&) {
    return "";
  }
}

bool write_endpoint(const std::string& folder, const ServiceEndpoint& endpoint) {
  if (folder.empty()) return false;
  nlohmann::json json = {{"address", endpoint.address}, {"ip", endpoint.ip}, {"port", endpoint.port},
                         {"run_id", endpoint.run_id}, {"host", endpoint.host}};
  try {
    util::write_file_atomically(folder + "/" + kEndpointFile,
                                json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    return true;
  } catch (const util::SystemError&) {
    return false;
  }
}

std::optional<ServiceEndpoint> find_endpoint(const std::string& folder) {
  std::vector<fs::path> candidates = {fs::path(folder) / kEndpointFile, fs::path(folder) / "logs" / kEndpointFile};
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(fs::path(folder) / "logs", error)) {
    if (entry.is_directory(error)) candidates.push_back(entry.path() / kEndpointFile);
  }
  std::optional<fs::path> newest;
  fs::file_time_type newest_time{};
  for (const auto& candidate : candidates) {
    auto time = fs::last_write_time(candidate, error);
    if (error) continue;
    if (!newest || time > newest_time) {
      newest = candidate;
      newest_time = time;
    }
  }
  if (!newest) return std::nullopt;
  return read_endpoint(*newest);
}

}  // namespace dlaunch::rendezvous
