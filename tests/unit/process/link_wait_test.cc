// The one wait of a loop that keeps a connection outside an event loop: it
// also wakes for any of the other descriptors given (the gate's check's
// stdout and stderr), skipping one that is negative (a pipe that ended).
#include "process/link_wait.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>

#include "util/fd.h"

namespace dlaunch::process {
namespace {

using namespace std::chrono_literals;

class LinkWaitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int ends[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends), 0);
    link_ = util::Fd(ends[0]);
    peer_ = util::Fd(ends[1]);
  }

  SignalChannel signals_;
  util::Fd link_;  // never readable: its peer writes nothing
  util::Fd peer_;
};

TEST_F(LinkWaitTest, AnyOtherDescriptorWakesItAndANegativeOneIsSkipped) {
  util::Pipe first = util::make_pipe();
  util::Pipe second = util::make_pipe();
  const int others[] = {-1, first.read_end.get(), second.read_end.get()};
  ASSERT_EQ(::write(second.write_end.get(), "x", 1), 1);  // only the last one has something
  auto started = std::chrono::steady_clock::now();
  LinkWake woke = wait_for_link(link_.get(), false, signals_, util::Clock::now() + 60s, others);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 30s);  // woken, not at the deadline
  EXPECT_TRUE(woke.other);
  EXPECT_FALSE(woke.readable);
}

TEST_F(LinkWaitTest, QuietOthersLetItSleepUntilItsWake) {
  util::Pipe quiet = util::make_pipe();
  const int others[] = {quiet.read_end.get(), -1};
  LinkWake woke = wait_for_link(link_.get(), false, signals_, util::Clock::now() + 50ms, others);
  EXPECT_FALSE(woke.other);
  EXPECT_FALSE(woke.readable);
}

}  // namespace
}  // namespace dlaunch::process
