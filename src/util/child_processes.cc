#include "util/child_processes.h"

#include <cctype>
#include <cerrno>
#include <dirent.h>
#include <fcntl.h>
#include <string>
#include <unistd.h>

#include "util/fd.h"
#include "util/strings.h"

namespace dlaunch::util {
namespace {

// The parent pid in /proc/PID/stat: "PID (COMM) STATE PPID ...", where
// COMM may hold spaces and parentheses, so the fields after the last ')'.
pid_t parent_of(const char* pid) {
  std::string path = std::string("/proc/") + pid + "/stat";
  Fd file(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!file) return -1;
  char buffer[512];
  ssize_t got = read_retrying(file.get(), buffer, sizeof(buffer) - 1);
  if (got <= 0) return -1;
  std::string_view stat(buffer, static_cast<std::size_t>(got));
  std::size_t close = stat.rfind(')');
  if (close == std::string_view::npos || close + 4 >= stat.size()) return -1;
  std::string_view rest = stat.substr(close + 4);  // past ") S "
  auto parent = parse_int(rest.substr(0, rest.find(' ')));
  return parent ? static_cast<pid_t>(*parent) : -1;
}

// The numeric entries of the folder PATH (pids, thread ids).
std::vector<std::string> numeric_entries(const std::string& path) {
  std::vector<std::string> names;
  DIR* folder = ::opendir(path.c_str());
  if (folder == nullptr) return names;
  while (dirent* entry = ::readdir(folder)) {
    if (std::isdigit(static_cast<unsigned char>(entry->d_name[0]))) names.emplace_back(entry->d_name);
  }
  ::closedir(folder);
  return names;
}

// Appends the pids of one thread's children file ("1 2 3 ") to PIDS; false
// when the file is missing (the kernel has no such lists). A thread that
// ended meanwhile has no file either: its task folder is gone too.
bool read_children_file(const std::string& task, std::vector<pid_t>& pids) {
  Fd file(::open((task + "/children").c_str(), O_RDONLY | O_CLOEXEC));
  if (!file) return errno != ENOENT || ::access(task.c_str(), F_OK) != 0;
  std::string text;
  char buffer[4096];
  // Bounded by the kernel (a pid is at most 8 characters and a space).
  while (true) {
    ssize_t got = read_retrying(file.get(), buffer, sizeof(buffer));
    if (got <= 0) break;
    text.append(buffer, static_cast<std::size_t>(got));
  }
  for (const std::string& word : split(text, ' ')) {
    if (auto pid = parse_int(trim(word)); pid && *pid > 0) pids.push_back(static_cast<pid_t>(*pid));
  }
  return true;
}

}  // namespace

std::optional<std::vector<pid_t>> child_processes_from_task_lists(pid_t parent) {
  std::string tasks = "/proc/" + std::to_string(parent) + "/task";
  std::vector<pid_t> children;
  for (const std::string& tid : numeric_entries(tasks)) {
    if (!read_children_file(tasks + "/" + tid, children)) return std::nullopt;
  }
  return children;
}

std::vector<pid_t> child_processes_by_scan(pid_t parent) {
  std::vector<pid_t> children;
  for (const std::string& pid : numeric_entries("/proc")) {
    if (parent_of(pid.c_str()) != parent) continue;
    if (auto number = parse_int(pid)) children.push_back(static_cast<pid_t>(*number));
  }
  return children;
}

std::vector<pid_t> child_processes(pid_t parent) {
  if (auto listed = child_processes_from_task_lists(parent)) return *listed;
  return child_processes_by_scan(parent);
}

}  // namespace dlaunch::util
