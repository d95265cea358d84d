#include "util/trusted_folder.h"

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fmt/format.h>
#include <grp.h>
#include <pwd.h>
#include <unistd.h>
#include <vector>

#include "util/error.h"

namespace dlaunch::util {
namespace {

// The sentence after a distrusted folder's reason: why it matters.
constexpr const char* kWhyItMatters =
    "another user could plant symbolic links there that dlaunch would write through";

std::string user_name(uid_t uid) {
  std::vector<char> buffer(16384);
  struct passwd entry {};
  struct passwd* found = nullptr;
  if (::getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) != 0 || found == nullptr) return "";
  return found->pw_name;
}

// FOLDER without trailing slashes ("/" stays).
std::string without_trailing_slash(std::string folder) {
  while (folder.size() > 1 && folder.back() == '/') folder.pop_back();
  return folder;
}

std::string distrust_message(const std::string& subject, const FolderDistrust& distrust) {
  std::string text = subject;
  text += ' ';
  text += distrust.why;
  text += ": ";
  text += kWhyItMatters;
  text += ". ";
  text += distrust.fix;
  return text;
}

}  // namespace

std::optional<FolderDistrust> folder_distrust(const std::string& folder, const struct stat& info, uid_t euid,
                                              bool group_is_private) {
  if (!S_ISDIR(info.st_mode)) return FolderDistrust{"is not a folder", "Give a folder"};
  if (info.st_uid != euid)
    return FolderDistrust{fmt::format("belongs to another user (uid {}), not to you (uid {})", info.st_uid, euid),
                          "Choose a folder you own"};
  if ((info.st_mode & S_ISVTX) != 0) return std::nullopt;
  if ((info.st_mode & S_IWOTH) != 0)
    return FolderDistrust{"may be written by every user and has no sticky bit",
                          fmt::format("Choose a folder only you may write, or: chmod o-w {}", folder)};
  if ((info.st_mode & S_IWGRP) != 0 && !group_is_private)
    return FolderDistrust{fmt::format("may be written by its group (gid {}) and has no sticky bit", info.st_gid),
                          fmt::format("Choose a folder only you may write, or: chmod g-w {}", folder)};
  return std::nullopt;
}

bool is_private_group(gid_t gid, uid_t euid) {
  const std::string user = user_name(euid);
  if (user.empty()) return false;
  std::vector<char> buffer(65536);
  struct group entry {};
  struct group* found = nullptr;
  if (::getgrgid_r(gid, &entry, buffer.data(), buffer.size(), &found) != 0 || found == nullptr) return false;
  if (user != found->gr_name) return false;
  for (char** member = found->gr_mem; member != nullptr && *member != nullptr; ++member) {
    if (user != *member) return false;
  }
  return true;
}

void check_trusted_folder(const std::string& folder, const std::string& what) {
  const uid_t euid = ::geteuid();
  struct stat info {};
  if (::lstat(folder.c_str(), &info) != 0) throw system_error(fmt::format("cannot look at {} '{}'", what, folder), errno);
  if (S_ISLNK(info.st_mode) && info.st_uid != euid && info.st_uid != 0)
    throw InputError(fmt::format("{} '{}' is a symbolic link of another user (uid {}): {}. Give the folder it "
                                 "names, if you trust it, or choose a folder you own",
                                 what, folder, info.st_uid, kWhyItMatters));
  if (::stat(folder.c_str(), &info) != 0) throw system_error(fmt::format("cannot look at {} '{}'", what, folder), errno);
  bool group_private = (info.st_mode & S_IWGRP) != 0 && is_private_group(info.st_gid, euid);
  if (auto distrust = folder_distrust(folder, info, euid, group_private))
    throw InputError(distrust_message(fmt::format("{} '{}'", what, folder), *distrust));
}

void make_trusted_folder(const std::string& folder, const std::string& what) {
  const std::string path = without_trailing_slash(folder);
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  std::error_code error;
  if (!parent.empty()) std::filesystem::create_directories(parent, error);
  if (error) throw SystemError(fmt::format("cannot create {} '{}': {}", what, folder, error.message()));
  // Its own mode, not create_directories' 0777: under umask 002 that would
  // make a folder its group may write, which the check then refuses.
  if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST)
    throw system_error(fmt::format("cannot create {} '{}'", what, folder), errno);
  check_trusted_folder(path, what);
}

void make_own_folders(const std::string& folder, int count) {
  std::vector<std::string> chain;
  std::filesystem::path path = without_trailing_slash(folder);
  for (int level = 0; level < count; ++level) {
    chain.push_back(path.string());
    path = path.parent_path();
  }
  std::reverse(chain.begin(), chain.end());
  const uid_t euid = ::geteuid();
  for (const std::string& component : chain) {
    if (::mkdir(component.c_str(), 0755) == 0) continue;
    if (errno != EEXIST) throw system_error(fmt::format("cannot create folder {}", component), errno);
    struct stat info {};
    if (::lstat(component.c_str(), &info) != 0) throw system_error(fmt::format("cannot look at {}", component), errno);
    if (S_ISLNK(info.st_mode))
      throw SystemError(fmt::format("{} is a symbolic link, and dlaunch never writes through one. Remove it", component));
    bool group_private = (info.st_mode & S_IWGRP) != 0 && is_private_group(info.st_gid, euid);
    if (auto distrust = folder_distrust(component, info, euid, group_private))
      throw SystemError(distrust_message(component, *distrust));
  }
}

}  // namespace dlaunch::util
