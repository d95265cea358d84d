#include "util/atomic_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/error.h"
#include "util/fd.h"
#include "util/safe_file.h"

namespace dlaunch::util {

namespace {

// NFS may report a link() that did happen as failed (its reply was lost and
// the retry met the link): the file then has two names (open(2)).
bool linked_after_all(const std::string& temporary) {
  int error = errno;
  struct stat info {};
  bool linked = ::stat(temporary.c_str(), &info) == 0 && info.st_nlink == 2;
  errno = error;
  return linked;
}

// Writes CONTENT to a new file beside PATH, named unpredictably
// (util/safe_file.h), and hands it to PLACE (rename or link onto PATH, which
// replace or meet a link planted at PATH, never write through it), which
// returns 0 or sets errno. Returns false when PLACE failed with EEXIST and
// that is allowed. The temporary never outlives a failure.
bool write_beside(const std::string& path, const std::string& content, int (*place)(const char*, const char*),
                  bool exists_is_no_error) {
  TemporaryFile written = create_temporary_beside(path);
  const std::string& temporary = written.path;
  auto fail = [&](const char* what) {
    int error = errno;
    ::unlink(temporary.c_str());
    throw SystemError(fmt::format("cannot {} {}: {}", what, path, std::strerror(error)));
  };
  if (!write_all(written.file.get(), content)) fail("write");
  written.file.reset();
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
