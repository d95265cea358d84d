#include "util/child_processes.h"

#include <cctype>
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

}  // namespace

std::vector<pid_t> child_processes(pid_t parent) {
  std::vector<pid_t> children;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return children;
  while (dirent* entry = ::readdir(proc)) {
    if (!std::isdigit(static_cast<unsigned char>(entry->d_name[0]))) continue;
    if (parent_of(entry->d_name) == parent) {
      if (auto pid = parse_int(entry->d_name)) children.push_back(static_cast<pid_t>(*pid));
    }
  }
  ::closedir(proc);
  return children;
}

}  // namespace dlaunch::util
