// A private folder that lives as long as an object: the log root of a run
// without --log-dir, the stack capture's scratch space for Python dumps,
// dlaunch ssh's folder for `dlaunch stacks`, and every unit test's files.
#pragma once

#include <string>

#include "util/environment.h"

namespace dlaunch::util {

class TemporaryFolder {
 public:
  // Makes BASE/PREFIX-XXXXXX with mkdtemp (a new name, mode 0700, so no
  // other user reads or plants anything in it). Throws SystemError naming
  // the pattern when it cannot.
  TemporaryFolder(const std::string& base, const std::string& prefix);
  // Removes the folder and everything in it, unless keep() was called;
  // errors are ignored (a file a worker left may be another user's).
  ~TemporaryFolder();
  TemporaryFolder(TemporaryFolder&& other) noexcept;
  TemporaryFolder& operator=(TemporaryFolder&& other) noexcept;
  TemporaryFolder(const TemporaryFolder&) = delete;
  TemporaryFolder& operator=(const TemporaryFolder&) = delete;

  const std::string& path() const { return path_; }

  // Leaves the folder in place when this object goes: what it holds is
  // worth keeping (a worker's log, a stack report).
  void keep() { kept_ = true; }

 private:
  void remove();

  std::string path_;
  bool kept_ = false;
};

// Where temporary folders go: $TMPDIR when set and not empty, else /tmp.
std::string temporary_base(const Environment& environment);

}  // namespace dlaunch::util
