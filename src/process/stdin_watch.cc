#include "process/stdin_watch.h"

#include <cerrno>
#include <csignal>
#include <poll.h>
#include <unistd.h>

namespace dlaunch::process {
namespace {

// Returns when stdin reached end-of-file (or failed): true; or when woken: false.
bool wait_for_stdin_close(int wake_fd) {
  char buffer[4096];
  for (;;) {
    pollfd fds[2] = {{STDIN_FILENO, POLLIN, 0}, {wake_fd, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (fds[1].revents != 0) return false;
    if (fds[0].revents == 0) continue;
    ssize_t got = ::read(STDIN_FILENO, buffer, sizeof(buffer));
    if (got > 0 || (got < 0 && (errno == EINTR || errno == EAGAIN))) continue;  // input is ignored
    return true;
  }
}

}  // namespace

StdinWatch::StdinWatch()
    : wake_(util::make_pipe()), thread_([wake = wake_.read_end.get()] {
        if (wait_for_stdin_close(wake)) ::kill(::getpid(), SIGHUP);
      }) {}

StdinWatch::~StdinWatch() {
  util::write_all(wake_.write_end.get(), "x");
  thread_.join();
}

}  // namespace dlaunch::process
