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

void write_file_atomically(const std::string& path, const std::string& content) {
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
  if (::rename(temporary.c_str(), path.c_str()) != 0) fail("rename onto");
}

}  // namespace dlaunch::util
