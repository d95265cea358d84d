// The stdin watch: end-of-file on stdin raises SIGHUP for the signal
// channel; input is read and ignored; destroying the watch stops it while
// stdin stays open. Each case runs in a fresh process (a death test), as it
// replaces the process's stdin and takes SIGHUP.
#include "process/stdin_watch.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <ctime>
#include <optional>
#include <thread>
#include <utility>

#include "util/fd.h"

namespace dlaunch::process {
namespace {

using namespace std::chrono_literals;

// In the death test's process: stdin becomes the read end of a new pipe,
// whose write end is returned, and SIGHUP is blocked, so the watch's
// thread inherits the mask and the signal waits to be taken here.
util::Fd replace_stdin_and_block_sighup() {
  util::Pipe pipe = util::make_pipe();
  if (::dup2(pipe.read_end.get(), STDIN_FILENO) < 0) std::_Exit(20);
  sigset_t hup;
  sigemptyset(&hup);
  sigaddset(&hup, SIGHUP);
  if (::pthread_sigmask(SIG_BLOCK, &hup, nullptr) != 0) std::_Exit(21);
  return std::move(pipe.write_end);
}

bool sighup_pending() {
  sigset_t pending;
  sigpending(&pending);
  return sigismember(&pending, SIGHUP) == 1;
}

// Waits (at most 10 s) for SIGHUP; true when it came.
bool take_sighup() {
  sigset_t hup;
  sigemptyset(&hup);
  sigaddset(&hup, SIGHUP);
  timespec limit{10, 0};
  return ::sigtimedwait(&hup, nullptr, &limit) == SIGHUP;
}

class StdinWatchDeathTest : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST_F(StdinWatchDeathTest, EndOfFileOnStdinRaisesSighup) {
  EXPECT_EXIT(
      {
        util::Fd writer = replace_stdin_and_block_sighup();
        StdinWatch watch;
        if (sighup_pending()) std::_Exit(10);  // not before stdin ends
        writer.reset();                        // the ssh session is gone
        std::_Exit(take_sighup() ? 0 : 11);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST_F(StdinWatchDeathTest, InputIsIgnored) {
  EXPECT_EXIT(
      {
        util::Fd writer = replace_stdin_and_block_sighup();
        std::optional<StdinWatch> watch;
        watch.emplace();
        if (!util::write_all(writer.get(), "some input the launcher does not want\n")) std::_Exit(10);
        // Wait (bounded) until the watch has read it all.
        int unread = 1;
        for (auto give_up = std::chrono::steady_clock::now() + 10s;
             unread > 0 && std::chrono::steady_clock::now() < give_up;
             std::this_thread::sleep_for(1ms))
          if (::ioctl(STDIN_FILENO, FIONREAD, &unread) != 0) std::_Exit(11);
        if (unread > 0) std::_Exit(12);
        // Joining its thread: whatever it would raise for that input is raised by now.
        watch.reset();
        std::_Exit(sighup_pending() ? 13 : 0);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST_F(StdinWatchDeathTest, DestroyingTheWatchStopsItWhileStdinStaysOpen) {
  EXPECT_EXIT(
      {
        util::Fd writer = replace_stdin_and_block_sighup();
        { StdinWatch watch; }  // returns although stdin never ends
        writer.reset();        // nothing watches any more
        std::_Exit(sighup_pending() ? 10 : 0);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace dlaunch::process
