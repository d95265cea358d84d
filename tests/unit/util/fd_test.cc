// The descriptor owner and the I/O helpers every loop relies on.
#include "util/fd.h"

#include <gtest/gtest.h>
#include <csignal>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <string>

namespace dlaunch::util {
namespace {

bool is_open(int fd) { return ::fcntl(fd, F_GETFD) != -1; }

// Ignores SIGPIPE while it lives, as the launcher does.
struct NoSigpipe {
  sighandler_t previous = ::signal(SIGPIPE, SIG_IGN);
  ~NoSigpipe() { ::signal(SIGPIPE, previous); }
};

TEST(Fd, ClosesWhatItOwnsOnceAndHandsItOverOnMoveOrRelease) {
  Pipe pipe = make_pipe();
  int read_end = pipe.read_end.get();
  int write_end = pipe.write_end.get();
  EXPECT_TRUE(pipe.read_end.valid());
  {
    Fd moved = std::move(pipe.read_end);
    EXPECT_FALSE(pipe.read_end.valid());
    EXPECT_EQ(moved.get(), read_end);
    EXPECT_TRUE(is_open(read_end));
  }
  EXPECT_FALSE(is_open(read_end));

  int released = pipe.write_end.release();
  EXPECT_EQ(released, write_end);
  EXPECT_FALSE(pipe.write_end);
  EXPECT_TRUE(is_open(released));
  Fd again(released);
  again.reset();
  EXPECT_FALSE(is_open(released));
}

TEST(Fd, PipesAreCloseOnExecAndFlagsCanBeSet) {
  Pipe pipe = make_pipe();
  EXPECT_TRUE(::fcntl(pipe.read_end.get(), F_GETFD) & FD_CLOEXEC);
  EXPECT_TRUE(::fcntl(pipe.write_end.get(), F_GETFD) & FD_CLOEXEC);
  set_cloexec(pipe.write_end.get(), false);
  EXPECT_FALSE(::fcntl(pipe.write_end.get(), F_GETFD) & FD_CLOEXEC);
  EXPECT_FALSE(::fcntl(pipe.read_end.get(), F_GETFL) & O_NONBLOCK);
  set_nonblocking(pipe.read_end.get());
  EXPECT_TRUE(::fcntl(pipe.read_end.get(), F_GETFL) & O_NONBLOCK);
}

TEST(Fd, WriteAllDeliversEverythingAndReadRetryingReadsIt) {
  Pipe pipe = make_pipe();
  ASSERT_TRUE(write_all(pipe.write_end.get(), "hello"));
  pipe.write_end.reset();
  char buffer[16];
  EXPECT_EQ(read_retrying(pipe.read_end.get(), buffer, sizeof(buffer)), 5);
  EXPECT_EQ(std::string(buffer, 5), "hello");
  EXPECT_EQ(read_retrying(pipe.read_end.get(), buffer, sizeof(buffer)), 0);  // end of file
}

TEST(Fd, WriteAllFailsOnAClosedReader) {
  NoSigpipe no_sigpipe;
  Pipe pipe = make_pipe();
  pipe.read_end.reset();
  errno = 0;
  EXPECT_FALSE(write_all(pipe.write_end.get(), "lost"));
  EXPECT_EQ(errno, EPIPE);
}

TEST(Fd, WriteNowTakesWhatFitsAndNeverWaits) {
  Pipe pipe = make_pipe();
  ::fcntl(pipe.write_end.get(), F_SETPIPE_SZ, 4096);
  set_nonblocking(pipe.write_end.get());
  std::string data(10000, 'x');
  WriteResult first = write_now(pipe.write_end.get(), data);
  EXPECT_EQ(first.written, 4096u);
  EXPECT_EQ(first.error, EAGAIN);
  WriteResult full = write_now(pipe.write_end.get(), "more");
  EXPECT_EQ(full.written, 0u);
  EXPECT_EQ(full.error, EAGAIN);

  Pipe roomy = make_pipe();
  WriteResult all = write_now(roomy.write_end.get(), "all of it");
  EXPECT_EQ(all.written, 9u);
  EXPECT_EQ(all.error, 0);
}

}  // namespace
}  // namespace dlaunch::util
