// The launcher's signals: which of them stop a job, and their delivery as
// events (their names: util/signal_names_test.cc).
#include "process/signal_channel.h"

#include <gtest/gtest.h>
#include <csignal>
#include <poll.h>

#include <string>

namespace dlaunch::process {
namespace {

TEST(SignalChannel, OnlyTheStopSignalsStopTheJob) {
  for (int signal : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) EXPECT_TRUE(SignalChannel::stops_job(signal)) << signal;
  for (int signal : {SIGUSR1, SIGUSR2, SIGCHLD, SIGKILL}) EXPECT_FALSE(SignalChannel::stops_job(signal)) << signal;
}

TEST(SignalChannel, ABlockedSignalArrivesAsAnEventAndTheMaskIsRestored) {
  sigset_t before;
  ::sigprocmask(SIG_SETMASK, nullptr, &before);
  {
    SignalChannel channel;
    EXPECT_EQ(channel.next(), std::nullopt);
    ::raise(SIGUSR1);  // blocked: it would otherwise end this test
    pollfd readable{channel.fd(), POLLIN, 0};
    ASSERT_EQ(::poll(&readable, 1, 1000), 1);
    EXPECT_EQ(channel.next(), SIGUSR1);
    EXPECT_EQ(channel.next(), std::nullopt);
    sigset_t during;
    ::sigprocmask(SIG_SETMASK, nullptr, &during);
    EXPECT_TRUE(sigismember(&during, SIGTERM));
    EXPECT_TRUE(sigismember(&during, SIGCHLD));
  }
  sigset_t after;
  ::sigprocmask(SIG_SETMASK, nullptr, &after);
  for (int signal : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGCHLD})
    EXPECT_EQ(sigismember(&after, signal), sigismember(&before, signal)) << signal;
}

// A warning signal (--preempt-signal) read by any wait is counted, and one
// not read yet shows as pending: the launcher asks both after a round.
TEST(SignalChannel, ItCountsWhatWasReadAndSeesWhatIsPending) {
  SignalChannel channel;
  unsigned before = channel.received(SIGUSR2);
  EXPECT_FALSE(SignalChannel::pending(SIGUSR2));
  ::raise(SIGUSR2);
  EXPECT_TRUE(SignalChannel::pending(SIGUSR2));
  EXPECT_EQ(channel.received(SIGUSR2), before) << "pending, not read yet";
  EXPECT_EQ(channel.next(), SIGUSR2);
  EXPECT_FALSE(SignalChannel::pending(SIGUSR2));
  EXPECT_EQ(channel.received(SIGUSR2), before + 1);
  EXPECT_EQ(channel.received(0), 0u);
  EXPECT_EQ(channel.received(999), 0u);
}

}  // namespace
}  // namespace dlaunch::process
