#include "util/temporary_folder.h"

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <utility>

#include "util/error.h"

namespace dlaunch::util {

TemporaryFolder::TemporaryFolder(const std::string& base, const std::string& prefix) {
  const std::string pattern = fmt::format("{}/{}-XXXXXX", base, prefix);
  std::string path = pattern;  // mkdtemp fills in the Xs, even when it fails
  if (::mkdtemp(path.data()) == nullptr)
    throw system_error(fmt::format("cannot create a temporary folder like {}", pattern), errno);
  path_ = std::move(path);
}

TemporaryFolder::~TemporaryFolder() { remove(); }

TemporaryFolder::TemporaryFolder(TemporaryFolder&& other) noexcept
    : path_(std::exchange(other.path_, std::string())), kept_(other.kept_) {}

TemporaryFolder& TemporaryFolder::operator=(TemporaryFolder&& other) noexcept {
  if (this != &other) {
    remove();
    path_ = std::exchange(other.path_, std::string());
    kept_ = other.kept_;
  }
  return *this;
}

void TemporaryFolder::remove() {
  if (path_.empty() || kept_) return;
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string temporary_base(const Environment& environment) {
  auto tmpdir = environment.get("TMPDIR");
  return tmpdir && !tmpdir->empty() ? *tmpdir : std::string("/tmp");
}

}  // namespace dlaunch::util
