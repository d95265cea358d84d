#include "util/oom_counter.h"

#include <fstream>
#include <sstream>

#include "util/cgroup.h"
#include "util/outside_file.h"
#include "util/strings.h"

namespace dlaunch::util {
namespace {

// memory.events and memory.oom_control are a few short lines.
constexpr std::size_t kMaxCountFileBytes = 4096;

// Through util/outside_file, as every file dlaunch reads: cut at the cap,
// never blocking; nullopt when it is absent or cannot be read.
std::optional<std::string> read_small_file(const std::string& path) {
  try {
    std::string text =
        read_outside_file_start(path, {"a cgroup's or /proc's own file", kMaxCountFileBytes, Links::kFollow});
    if (text.empty()) return std::nullopt;
    return text;
  } catch (const std::runtime_error&) {
    return std::nullopt;
  }
}

bool readable(const std::string& path) { return read_small_file(path).has_value(); }

// Where the v1 memory controller is mounted: a "cgroup" mount whose super
// options name "memory" (mountinfo's last field).
std::optional<std::string> memory_v1_mount_point() {
  std::ifstream file("/proc/self/mountinfo");
  std::string line;
  while (std::getline(file, line)) {
    std::size_t dash = line.find(" - ");
    if (dash == std::string::npos || line.compare(dash + 3, 7, "cgroup ") != 0) continue;
    std::istringstream after(line.substr(dash + 3));
    std::string type, source, options;
    if (!(after >> type >> source >> options)) continue;
    bool memory = false;
    for (const auto& option : split(options, ',')) memory = memory || option == "memory";
    if (!memory) continue;
    std::istringstream fields(line.substr(0, dash));
    std::string id, parent, device, root, point;
    if (fields >> id >> parent >> device >> root >> point) return point;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::uint64_t> parse_oom_kill_count(std::string_view text) {
  for (const auto& line : split(text, '\n')) {
    auto trimmed = trim(line);
    constexpr std::string_view kKey = "oom_kill ";
    if (trimmed.substr(0, kKey.size()) != kKey) continue;
    auto count = parse_int(trim(trimmed.substr(kKey.size())));
    if (count && *count >= 0) return static_cast<std::uint64_t>(*count);
  }
  return std::nullopt;
}

std::optional<std::string> memory_cgroup_v1_path(std::string_view proc_cgroup) {
  for (const auto& line : split(proc_cgroup, '\n')) {
    auto first = line.find(':');
    auto second = first == std::string::npos ? std::string::npos : line.find(':', first + 1);
    if (second == std::string::npos) continue;
    for (const auto& controller : split(line.substr(first + 1, second - first - 1), ',')) {
      if (controller == "memory") return line.substr(second + 1);
    }
  }
  return std::nullopt;
}

std::optional<std::string> own_oom_count_file() {
  if (auto dir = own_cgroup_dir()) {
    std::string events = *dir + "/memory.events";
    if (readable(events)) return events;
  }
  auto proc_cgroup = read_small_file("/proc/self/cgroup");
  auto path = proc_cgroup ? memory_cgroup_v1_path(*proc_cgroup) : std::nullopt;
  auto mount = memory_v1_mount_point();
  if (!path || !mount) return std::nullopt;
  std::string control = *mount + (*path == "/" ? "" : *path) + "/memory.oom_control";
  if (readable(control)) return control;
  return std::nullopt;
}

OomCounter::OomCounter() : OomCounter(own_oom_count_file()) {}

OomCounter::OomCounter(std::optional<std::string> file) : file_(std::move(file)), start_(read()) {}

std::optional<std::uint64_t> OomCounter::kills_since_start() const {
  auto now = read();
  if (!now || !start_) return std::nullopt;
  return *now >= *start_ ? *now - *start_ : 0;
}

std::optional<std::uint64_t> OomCounter::read() const {
  if (!file_) return std::nullopt;
  auto text = read_small_file(*file_);
  return text ? parse_oom_kill_count(*text) : std::nullopt;
}

}  // namespace dlaunch::util
