#include "launch/log_root.h"

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <vector>

#include "util/error.h"
#include "util/trusted_folder.h"

namespace dlaunch::launch {
namespace {

bool files_requested(const StreamRouting& routing) {
  if (routing.default_mask != kNoStream) return true;
  for (const auto& [rank, mask] : routing.per_rank) {
    if (mask != kNoStream) return true;
  }
  return false;
}

}  // namespace

LogRoot::LogRoot(const LaunchConfig& config) {
  if (config.log_dir) {
    path_ = std::filesystem::absolute(*config.log_dir).string();
    // Refused before anything is written there: another user's folder is
    // where links are planted for this run to write through.
    util::make_trusted_folder(path_, "--log-dir");
    return;
  }
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = fmt::format("{}/dlaunch_XXXXXX", tmp != nullptr && *tmp ? tmp : "/tmp");
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  if (::mkdtemp(buffer.data()) == nullptr)
    throw util::system_error(fmt::format("cannot create a temporary folder like {}", pattern), errno);
  path_ = buffer.data();
  temporary_ = true;
  keep_ = files_requested(config.redirects) || files_requested(config.tee);
}

bool LogRoot::kept() const {
  if (!temporary_ || keep_) return true;
  // A stack report (a hang) is kept with the folder it was saved in.
  std::error_code ignored;
  return std::filesystem::exists(path_ + "/stacks", ignored);
}

LogRoot::~LogRoot() {
  if (kept()) return;
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace dlaunch::launch
