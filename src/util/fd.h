// A move-only owner of a file descriptor, and I/O that survives EINTR.
#pragma once

#include <cstddef>
#include <string_view>
#include <sys/types.h>
#include <utility>

namespace dlaunch::util {

class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  Fd(Fd&& other) noexcept : fd_(other.release()) {}
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }
  ~Fd() { reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  explicit operator bool() const { return valid(); }
  int release() { return std::exchange(fd_, -1); }
  void reset(int fd = -1);

 private:
  int fd_ = -1;
};

// Both ends of a pipe, created close-on-exec.
struct Pipe {
  Fd read_end;
  Fd write_end;
};
// Throws SystemError when the pipe cannot be made.
Pipe make_pipe();

// read(2) retried on EINTR. Returns -1 with errno set on other errors.
ssize_t read_retrying(int fd, void* buffer, std::size_t size);
// Writes all of DATA, retrying on EINTR and short writes. Returns false
// (errno set) when the descriptor fails, e.g. EPIPE on a closed reader.
// It waits for room on a full non-blocking descriptor: only for pipes whose
// reader is ours (the watchdog's, a wake-up pipe), never for a console.
bool write_all(int fd, std::string_view data);

// What write_now() did: the bytes written, and the errno that stopped it
// (0 when everything was written).
struct WriteResult {
  std::size_t written = 0;
  int error = 0;
};
// Writes as much of DATA as FD takes now, retrying on EINTR and short
// writes, and never waits: a full non-blocking descriptor stops it with
// EAGAIN, any other failure with its errno.
WriteResult write_now(int fd, std::string_view data);

void set_nonblocking(int fd);
void set_cloexec(int fd, bool on);

}  // namespace dlaunch::util
