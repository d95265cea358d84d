#include "util/atomic_file.h"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/error.h"
#include "util/fd.h"

namespace dlaunch::util {

namespace {

// Writes CONTENT to a file beside PATH and hands it to PLACE (rename or
// link onto PATH), which returns 0 or sets errno. Returns false when PLACE
// failed with EEXIST and that is allowed.
// A name beside PATH no other writer uses at once: not another thread of
// this process (the counter), nor a process of the same pid on another host
// of a shared file system (containers) (the host name), as open(2) advises
// for link() on NFS.
std::string temporary_beside(const std::string& path) {
  static std::atomic<unsigned> written{0};
  char host[256] = {};
  if (::gethostname(host, sizeof(host) - 1) != 0) host[0] = '\0';
  return fmt::format("{}.{}.{}.{}.tmp", path, host, ::getpid(), written++);
}

// NFS may report a link() that did happen as failed (its reply was lost and
// the retry met the link): the file then has two names (open(2)).
bool linked_after_all(const std::string& temporary) {
  int error = errno;
  struct stat info {};
  bool linked = ::stat(temporary.c_str(), &info) == 0 && info.st_nlink == 2;
  errno = error;
  return linked;
}

bool write_beside(const std::string& path, const std::string& content, int (*place)(const char*, const char*),
                  bool exists_is_no_error) {
  const std::string temporary = temporary_beside(path);
  auto fail = [&](const char* what) {
    int error = errno;
    ::unlink(temporary.c_str());
    throw SystemError(fmt::format("cannot {} {}: {}", what, path, std::strerror(error)));
  };
  {
    Fd file(::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (!file) fail("create a file beside");
    if (!write_all(file.get(), content)) fail("write");
  }
  if (place(temporary.c_str(), path.c_str()) == 0 || (place == &::link && linked_after_all(temporary))) {
    if (place == &::link) ::unlink(temporary.c_str());
    return true;
  }
  if (exists_is_no_error && errno == EEXIST) {
    ::unlink(temporary.c_str());
    return false;
  }
  fail(place == &::link ? "link onto" : "rename onto");
  return false;
}

}  // namespace

void write_file_atomically(const std::string& path, const std::string& content) {
  write_beside(path, content, &::rename, false);
}

bool write_file_if_absent(const std::string& path, const std::string& content) {
  return write_beside(path, content, &::link, true);
}

}  // namespace dlaunch::util
