#include "util/outside_file.h"

#include <cerrno>
#include <cstdint>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/error.h"

namespace dlaunch::util {
namespace {

std::string size_text(std::size_t bytes) {
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) return fmt::format("{} MiB", bytes >> 20);
  if (bytes >= (1u << 10) && bytes % (1u << 10) == 0) return fmt::format("{} KiB", bytes >> 10);
  return fmt::format("{} bytes", bytes);
}

[[noreturn]] void refuse(const std::string& path, std::string_view found, const OutsideFile& expect) {
  throw InputError(fmt::format("{} is {}, where dlaunch expects {} (a regular file): it is not read. Remove "
                               "it or put the right file there; if nobody should have, find who did",
                               path, found, expect.expected));
}

[[noreturn]] void refuse_size(const std::string& path, const OutsideFile& expect) {
  throw InputError(fmt::format("{} is larger than {}, more than {} ever is: it is not read. Remove it or put "
                               "the right file there",
                               path, size_text(expect.max_bytes), expect.expected));
}

// ELOOP under O_NOFOLLOW means PATH's last part is a link; say so plainly.
[[noreturn]] void refuse_failed_open(const std::string& path, int error, const OutsideFile& expect) {
  struct stat info {};
  if (error == ELOOP && expect.links == Links::kRefuse && ::lstat(path.c_str(), &info) == 0 && S_ISLNK(info.st_mode))
    refuse(path, "a symbolic link", expect);
  throw system_error(fmt::format("cannot open {}", path), error);
}

// Opens PATH without ever blocking and checks what it is: a regular file,
// not too big when SIZE_CAPPED. An invalid Fd when there is none.
Fd open_checked(const std::string& path, const OutsideFile& expect, bool size_capped) {
  int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY;
  if (expect.links == Links::kRefuse) flags |= O_NOFOLLOW;
  Fd file(::open(path.c_str(), flags));
  if (!file) {
    const int error = errno;
    if (error == ENOENT || error == ENOTDIR) return Fd();
    refuse_failed_open(path, error, expect);
  }
  struct stat info {};
  if (::fstat(file.get(), &info) != 0) throw system_error(fmt::format("cannot examine {}", path), errno);
  if (!S_ISREG(info.st_mode)) refuse(path, file_kind(info.st_mode), expect);
  if (size_capped && static_cast<std::uintmax_t>(info.st_size) > expect.max_bytes) refuse_size(path, expect);
  return file;
}

// FILE (at PATH, for the message) to its end, or until it gave more than
// LIMIT bytes: then what it gave so far. Throws SystemError when a read fails.
std::string read_past(const Fd& file, const std::string& path, std::size_t limit) {
  std::string text;
  char buffer[64 * 1024];
  while (text.size() <= limit) {
    ssize_t got = read_retrying(file.get(), buffer, sizeof(buffer));
    if (got < 0) throw system_error(fmt::format("cannot read {}", path), errno);
    if (got == 0) break;
    text.append(buffer, static_cast<std::size_t>(got));
  }
  return text;
}

}  // namespace

std::string_view file_kind(unsigned mode) {
  switch (mode & S_IFMT) {
    case S_IFREG: return "a regular file";
    case S_IFDIR: return "a directory";
    case S_IFIFO: return "a FIFO";
    case S_IFCHR: return "a character device";
    case S_IFBLK: return "a block device";
    case S_IFSOCK: return "a socket";
    case S_IFLNK: return "a symbolic link";
    default: return "not a file";
  }
}

std::optional<std::string> read_outside_file(const std::string& path, const OutsideFile& expect) {
  Fd file = open_checked(path, expect, /*size_capped=*/true);
  if (!file) return std::nullopt;
  std::string text = read_past(file, path, expect.max_bytes);
  // It grew after fstat (or its size was not told): the cap holds anyway.
  if (text.size() > expect.max_bytes) refuse_size(path, expect);
  return text;
}

std::string read_outside_file_start(const std::string& path, const OutsideFile& expect) {
  Fd file = open_checked(path, expect, /*size_capped=*/false);
  if (!file) return "";
  std::string text = read_past(file, path, expect.max_bytes);
  if (text.size() > expect.max_bytes) text.resize(expect.max_bytes);
  return text;
}

Fd open_outside_file(const std::string& path, const OutsideFile& expect) {
  return open_checked(path, expect, /*size_capped=*/false);
}

}  // namespace dlaunch::util
