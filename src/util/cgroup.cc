#include "util/cgroup.h"

#include <cerrno>
#include <csignal>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <thread>
#include <unistd.h>
#include <vector>

#include "util/fd.h"
#include "util/strings.h"

namespace dlaunch::util {
namespace {

// Undoes mountinfo's octal escapes ("\040" for a space).
std::string unescape(const std::string& field) {
  std::string text;
  for (std::size_t i = 0; i < field.size(); ++i) {
    bool octal = field[i] == '\\' && i + 3 < field.size() &&
                 field.find_first_not_of("01234567", i + 1) >= i + 4;
    if (octal) {
      text.push_back(static_cast<char>(std::stoi(field.substr(i + 1, 3), nullptr, 8)));
      i += 3;
    } else {
      text.push_back(field[i]);
    }
  }
  return text;
}

// This process's path in the v2 hierarchy: the "0::PATH" line.
std::optional<std::string> own_cgroup_path() {
  std::ifstream file("/proc/self/cgroup");
  std::string line;
  while (std::getline(file, line)) {
    if (line.rfind("0::", 0) == 0) return line.substr(3);
  }
  return std::nullopt;
}

// Where the cgroup2 file system is mounted, and which of its folders that is.
struct Cgroup2Mount {
  std::string root;
  std::string point;
};

std::optional<Cgroup2Mount> cgroup2_mount() {
  std::ifstream file("/proc/self/mountinfo");
  std::string line;
  while (std::getline(file, line)) {
    std::size_t dash = line.find(" - ");
    if (dash == std::string::npos || line.compare(dash + 3, 8, "cgroup2 ") != 0) continue;
    std::istringstream fields(line.substr(0, dash));
    std::string id, parent, device, root, point;
    if (fields >> id >> parent >> device >> root >> point)
      return Cgroup2Mount{unescape(root), unescape(point)};
  }
  return std::nullopt;
}

std::vector<std::string> pids_in(const std::string& dir) {
  std::ifstream file(dir + "/cgroup.procs");
  std::vector<std::string> pids;
  std::string pid;
  while (file >> pid) pids.push_back(pid);
  return pids;
}

bool write_file(const std::string& path, std::string_view text) {
  Fd file(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  return file && write_now(file.get(), text).error == 0;
}

}  // namespace

std::optional<std::string> own_cgroup_dir() {
  auto path = own_cgroup_path();
  auto mount = cgroup2_mount();
  if (!path || !mount) return std::nullopt;
  std::string root = mount->root == "/" ? "" : mount->root;
  if (path->compare(0, root.size(), root) != 0) return std::nullopt;
  std::string below = path->substr(root.size());
  if (below == "/") below.clear();
  return mount->point + below;
}

void kill_cgroup(const std::string& dir) {
  if (write_file(dir + "/cgroup.kill", "1")) return;
  // Older kernels: signal every member until none is left; a member that
  // forks meanwhile is caught by the next pass.
  for (int pass = 0; pass < 20; ++pass) {
    auto pids = pids_in(dir);
    DIR* folder = ::opendir(dir.c_str());
    bool children = false;
    while (dirent* entry = folder != nullptr ? ::readdir(folder) : nullptr) {
      std::string name = entry->d_name;
      if (entry->d_type == DT_DIR && name != "." && name != "..") {
        kill_cgroup(dir + "/" + name);
        children = true;
      }
    }
    if (folder != nullptr) ::closedir(folder);
    if (pids.empty() && !children) return;
    for (const auto& pid : pids) {
      if (auto number = parse_int(pid); number && *number > 1)
        ::kill(static_cast<pid_t>(*number), SIGKILL);
    }
    if (pids.empty()) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

bool remove_cgroup(const std::string& dir, std::chrono::milliseconds limit) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    if (DIR* folder = ::opendir(dir.c_str())) {
      while (dirent* entry = ::readdir(folder)) {
        std::string name = entry->d_name;
        if (entry->d_type == DT_DIR && name != "." && name != "..")
          remove_cgroup(dir + "/" + name, std::chrono::milliseconds(0));
      }
      ::closedir(folder);
    }
    if (::rmdir(dir.c_str()) == 0 || errno == ENOENT) return true;
    // EBUSY: killed processes are still on their way out.
    if (errno != EBUSY || std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace dlaunch::util
