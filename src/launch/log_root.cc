#include "launch/log_root.h"

#include <filesystem>

#include "util/environment.h"
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
  temporary_.emplace(util::temporary_base(util::Environment::from_process()), "dlaunch");
  path_ = temporary_->path();
  keep_ = files_requested(config.redirects) || files_requested(config.tee);
}

bool LogRoot::kept() const {
  if (!temporary_ || keep_) return true;
  // A stack report (a hang) is kept with the folder it was saved in.
  std::error_code ignored;
  return std::filesystem::exists(path_ + "/stacks", ignored);
}

LogRoot::~LogRoot() {
  if (temporary_ && kept()) temporary_->keep();
}

}  // namespace dlaunch::launch
