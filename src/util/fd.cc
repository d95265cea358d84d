#include "util/fd.h"

#include <cerrno>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include "util/error.h"

namespace dlaunch::util {

void Fd::reset(int fd) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

Pipe make_pipe() {
  int ends[2];
  if (::pipe2(ends, O_CLOEXEC) != 0) throw system_error("cannot create a pipe", errno);
  return Pipe{Fd(ends[0]), Fd(ends[1])};
}

ssize_t read_retrying(int fd, void* buffer, std::size_t size) {
  for (;;) {
    ssize_t got = ::read(fd, buffer, size);
    if (got >= 0 || errno != EINTR) return got;
  }
}

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t wrote = ::write(fd, data.data(), data.size());
    if (wrote < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) {
        // A non-blocking console that is full: wait for room rather than drop lines.
        pollfd writable{fd, POLLOUT, 0};
        ::poll(&writable, 1, -1);
        continue;
      }
      return false;
    }
    data.remove_prefix(static_cast<std::size_t>(wrote));
  }
  return true;
}

WriteResult write_now(int fd, std::string_view data) {
  WriteResult result;
  while (result.written < data.size()) {
    ssize_t wrote = ::write(fd, data.data() + result.written, data.size() - result.written);
    if (wrote < 0) {
      if (errno == EINTR) continue;
      result.error = errno;
      break;
    }
    result.written += static_cast<std::size_t>(wrote);
  }
  return result;
}

void set_nonblocking(int fd) {
  int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
    throw system_error("cannot make descriptor non-blocking", errno);
}

void set_cloexec(int fd, bool on) {
  int flags = ::fcntl(fd, F_GETFD);
  if (flags < 0) throw system_error("cannot read descriptor flags", errno);
  flags = on ? (flags | FD_CLOEXEC) : (flags & ~FD_CLOEXEC);
  if (::fcntl(fd, F_SETFD, flags) < 0) throw system_error("cannot set descriptor flags", errno);
}

}  // namespace dlaunch::util
