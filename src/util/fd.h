// A move-only owner of a file descriptor, and I/O that survives EINTR.
#pragma once

#include <cstddef>
#include <string_view>
#include <sys/types.h>
#include <utility>

namespace dlaunch {

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
bool write_all(int fd, std::string_view data);

void set_nonblocking(int fd);
void set_cloexec(int fd, bool on);

}  // namespace dlaunch
