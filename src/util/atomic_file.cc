#include "util/atomic_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include "util/error.h"
#include "util/fd.h"

namespace dlaunch::util {

namespace {

// Writes CONTENT to a file beside PATH and hands it to PLACE (rename or
// link onto PATH), which returns 0 or sets errno. Returns false when PLACE
// failed with EEXIST and that is allowed.
bool write_beside(const std::string& path, const std::string& content, int (*place)(const char*, const char*),
                  bool exists_is_no_error) {
  const std::string temporary = fmt::format("{}.{}.tmp", path, ::getpid());
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
  if (place(temporary.c_str(), path.c_str()) == 0) {
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
