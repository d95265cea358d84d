// The folder that holds a run's per-worker files.
#pragma once

#include <optional>
#include <string>

#include "launch/launch_config.h"
#include "util/temporary_folder.h"

namespace dlaunch::launch {

// --log-dir when given (kept); otherwise a private temporary folder that
// holds the workers' error files and -r/-t logs. The temporary folder is
// removed at the end unless a worker's output was filed there, in which
// case its path is kept and reported, as torchrun does (a stack report
// keeps it too).
class LogRoot {
 public:
  // Throws SystemError when the folder cannot be created, and InputError
  // when --log-dir belongs to another user or others may write in it
  // without its sticky bit (util/trusted_folder.h).
  explicit LogRoot(const LaunchConfig& config);
  ~LogRoot();
  LogRoot(const LogRoot&) = delete;
  LogRoot& operator=(const LogRoot&) = delete;

  const std::string& path() const { return path_; }
  bool temporary() const { return temporary_.has_value(); }
  // True for --log-dir, for files requested with -r/-t, and once a stack
  // report was saved in it.
  bool kept() const;

 private:
  std::string path_;
  std::optional<util::TemporaryFolder> temporary_;  // without --log-dir
  bool keep_ = false;
};

}  // namespace dlaunch::launch
