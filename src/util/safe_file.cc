#include "util/safe_file.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <optional>
#include <random>
#include <sys/stat.h>
#include <unistd.h>

#include "util/error.h"

namespace dlaunch::util {
namespace {

// Every open: no link followed at the last component, no terminal taken
// as the controlling one, no descriptor left to a child.
constexpr int kBaseFlags = O_WRONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC;
// Names tried before create_temporary_beside gives up: each collision
// takes a 2^-64 guess, so more than one means someone fills the folder.
constexpr int kTemporaryTries = 16;

// Why the thing INFO describes (an lstat or fstat) is no file dlaunch may
// write over; nullopt when it is a regular file of this user with one name.
constexpr const char* kSymbolicLink = "it is a symbolic link, and dlaunch never writes through one (remove it)";

std::optional<std::string> rewrite_refusal(const struct stat& info) {
  if (S_ISLNK(info.st_mode)) return kSymbolicLink;
  if (!S_ISREG(info.st_mode))
    return "it is not a regular file (a FIFO or a device), and dlaunch writes only plain files of its own "
           "there (remove it)";
  if (info.st_uid != ::geteuid())
    return fmt::format("it belongs to another user (uid {}), and dlaunch writes only files of its own user "
                       "(uid {}) (remove it)",
                       info.st_uid, ::geteuid());
  if (info.st_nlink > 1)
    return fmt::format("it has {} names (hard links), so writing it would change another file too (remove it)",
                       info.st_nlink);
  return std::nullopt;
}

// What create_new_file met at PATH when it said EEXIST.
std::string existing_refusal(const std::string& path) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) == 0 && S_ISLNK(info.st_mode))
    return "a symbolic link is there, and dlaunch never writes through one (remove it)";
  return "something is already there, and dlaunch creates this file new instead of writing over what it finds "
         "(remove it)";
}

OpenedFile refused(int error, std::string why) {
  OpenedFile opened;
  opened.error = error;
  opened.refusal = std::move(why);
  return opened;
}

OpenedFile failed(int error) {
  OpenedFile opened;
  opened.error = error;
  return opened;
}

bool clear_nonblocking(int fd) {
  int flags = ::fcntl(fd, F_GETFL);
  return flags >= 0 && ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == 0;
}

// 16 hex digits from the system's random source (getrandom).
std::string random_name_part() {
  std::random_device source;
  std::uint64_t bits = (std::uint64_t{source()} << 32) | source();
  return fmt::format("{:016x}", bits);
}

}  // namespace

std::string OpenedFile::reason() const {
  return refusal.empty() ? std::string(std::strerror(error)) : refusal;
}

OpenedFile create_new_file(const std::string& path, mode_t mode, int flags) {
  Fd file(::open(path.c_str(), kBaseFlags | O_CREAT | O_EXCL | flags, mode));
  if (file) return OpenedFile{std::move(file), 0, ""};
  const int error = errno;
  if (error == EEXIST) return refused(error, existing_refusal(path));
  return failed(error);
}

OpenedFile open_file_to_rewrite(const std::string& path, mode_t mode, int flags) {
  OpenedFile created = create_new_file(path, mode, flags);
  if (created.file || created.error != EEXIST) return created;
  // Looked at before it is opened: opening a device or a FIFO may itself
  // do something (wait for a reader, start a watchdog).
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) return failed(errno);
  if (S_ISDIR(info.st_mode)) return failed(EISDIR);  // what open(2) says, and enough
  if (auto why = rewrite_refusal(info)) return refused(EEXIST, *why);
  // O_NONBLOCK until it is checked again: a FIFO swapped in since must not hold the open.
  Fd file(::open(path.c_str(), kBaseFlags | O_NONBLOCK | flags));
  if (!file) return errno == ELOOP ? refused(ELOOP, kSymbolicLink) : failed(errno);
  if (::fstat(file.get(), &info) != 0) return failed(errno);
  if (auto why = rewrite_refusal(info)) return refused(EEXIST, *why);
  if ((flags & O_NONBLOCK) == 0 && !clear_nonblocking(file.get())) return failed(errno);
  if (::ftruncate(file.get(), 0) != 0) return failed(errno);
  return OpenedFile{std::move(file), 0, ""};
}

void write_new_file(const std::string& path, const std::string& content, mode_t mode) {
  OpenedFile created = create_new_file(path, mode);
  if (!created.file) throw SystemError(fmt::format("cannot create {}: {}", path, created.reason()));
  if (!write_all(created.file.get(), content)) {
    const int error = errno;
    ::unlink(path.c_str());
    throw system_error(fmt::format("cannot write {}", path), error);
  }
}

TemporaryFile create_temporary_beside(const std::string& path, mode_t mode) {
  for (int attempt = 0; attempt < kTemporaryTries; ++attempt) {
    TemporaryFile temporary;
    temporary.path = path;
    temporary.path += '.';
    temporary.path += random_name_part();
    temporary.path += ".tmp";
    OpenedFile created = create_new_file(temporary.path, mode);
    if (created.file) {
      temporary.file = std::move(created.file);
      return temporary;
    }
    if (created.error != EEXIST) throw system_error(fmt::format("cannot create a file beside {}", path), created.error);
  }
  throw SystemError(fmt::format("cannot create a file beside {}: {} random names were all taken; something "
                                "is filling that folder",
                                path, kTemporaryTries));
}

}  // namespace dlaunch::util
