#include "util/open_file_limit.h"

#include <algorithm>
#include <sys/resource.h>

namespace dlaunch::util {
namespace {

// Written once, before any child is forked; only read afterwards.
rlimit original_limit{};
bool raised = false;

}  // namespace

std::size_t raise_open_file_limit(std::size_t cap) {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return 1024;
  rlim_t wanted = std::min<rlim_t>(limit.rlim_max, static_cast<rlim_t>(cap));
  if (limit.rlim_cur >= wanted) return static_cast<std::size_t>(limit.rlim_cur);
  rlimit higher = limit;
  higher.rlim_cur = wanted;
  if (::setrlimit(RLIMIT_NOFILE, &higher) != 0) return static_cast<std::size_t>(limit.rlim_cur);
  if (!raised) original_limit = limit;
  raised = true;
  return static_cast<std::size_t>(wanted);
}

void restore_open_file_limit_in_child() {
  if (raised) ::setrlimit(RLIMIT_NOFILE, &original_limit);
}

}  // namespace dlaunch::util
