// A native worker (no Python) that blocks in read() on a pipe nobody writes,
// inside functions of its own, with a second thread asleep: what a hang
// report must show with function names (tests/integration/local/test_run_hang.sh).
#include <unistd.h>

#include <cstdio>
#include <thread>

namespace stuck {

// noinline: the frames the report must name stay frames in an optimised build.
[[gnu::noinline]] void wait_for_input(int fd) {
  char byte = 0;
  std::printf("waiting for input\n");
  std::fflush(stdout);
  ssize_t got = ::read(fd, &byte, 1);  // never returns: the write end stays open here
  std::printf("read %zd\n", got);
}

[[gnu::noinline]] void run_reader() {
  int fds[2];
  if (::pipe(fds) != 0) return;
  wait_for_input(fds[0]);
}

}  // namespace stuck

int main() {
  std::thread sleeper([] { ::sleep(3600); });
  stuck::run_reader();
  sleeper.join();
  return 0;
}
