#include "submit/submission_folder.h"

#include <cerrno>
#include <filesystem>
#include <fmt/chrono.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/error.h"
#include "util/fd.h"
#include "util/safe_file.h"
#include "util/trusted_folder.h"

namespace dlaunch::submit {
namespace {

std::string candidate(const std::string& base, int attempt) {
  return attempt == 0 ? base : fmt::format("{}_{}", base, attempt);
}

}  // namespace

std::string timestamp_for(std::time_t when) {
  return fmt::format("{:%Y%m%d_%H%M%S}", fmt::localtime(when));
}

std::string next_submission_path(const std::string& output_dir, const std::string& timestamp) {
  std::string base = (std::filesystem::absolute(output_dir) / timestamp).string();
  for (int attempt = 0;; ++attempt) {
    std::string path = candidate(base, attempt);
    if (!std::filesystem::exists(path)) return path;
  }
}

std::string create_submission_folder(const std::string& output_dir, const std::string& timestamp) {
  // Another user's folder (or one others may write) could have the new
  // submission folder renamed away and a link put in its place.
  util::make_trusted_folder(output_dir, "the output folder");
  std::string base = (std::filesystem::absolute(output_dir) / timestamp).string();
  for (int attempt = 0;; ++attempt) {
    std::string path = candidate(base, attempt);
    if (::mkdir(path.c_str(), 0755) == 0) return path;
    if (errno != EEXIST) throw util::system_error(fmt::format("cannot create folder {}", path), errno);
  }
}

void write_secret_file(const std::string& path, const std::string& secret) {
  util::OpenedFile opened = util::create_new_file(path, 0600);
  if (!opened.file)
    throw util::SystemError(fmt::format("cannot create the secret file {}: {}", path, opened.reason()));
  const util::Fd& file = opened.file;
  // The umask can only have taken bits away; the owner must still read it.
  if (::fchmod(file.get(), 0600) != 0 || !util::write_all(file.get(), secret + "\n")) {
    int error = errno;
    ::unlink(path.c_str());
    throw util::system_error(fmt::format("cannot write the secret file {}", path), error);
  }
}

}  // namespace dlaunch::submit
