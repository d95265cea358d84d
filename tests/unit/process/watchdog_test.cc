// The watchdog: when the launcher's side of its pipe closes, every process
// group still registered is killed (the whole group, not only its leader);
// released groups are spared; it holds no end of the caller's pipes, leads
// a process group of its own and outlives the stop signals aimed at the
// launcher.
#include "process/watchdog.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "process/worker_process.h"
#include "util/environment.h"
#include "util/fd.h"

namespace dlaunch::process {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

int reap(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

// True when FD reaches end-of-file within LIMIT (what it yields before is dropped).
bool reaches_eof(int fd, std::chrono::milliseconds limit) {
  auto give_up = Clock::now() + limit;
  char buffer[256];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(give_up - Clock::now());
    if (left.count() <= 0) return false;
    pollfd ready{fd, POLLIN, 0};
    int n = ::poll(&ready, 1, static_cast<int>(left.count()));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    ssize_t got = util::read_retrying(fd, buffer, sizeof(buffer));
    if (got <= 0) return got == 0;
  }
}

// Reads one line from FD (blocking).
std::string read_line(int fd) {
  std::string line;
  char c;
  while (util::read_retrying(fd, &c, 1) == 1) {
    line += c;
    if (c == '\n') break;
  }
  return line;
}

// A worker that echoes each line of its stdin, so the test can tell it is alive.
struct EchoWorker {
  util::Pipe input = util::make_pipe();
  StartedWorker started;
  EchoWorker() {
    started = start_worker({"/bin/sh", "-c", "while read line; do echo \"$line\"; done"},
                           util::Environment::from_process(), input.read_end.get());
    input.read_end.reset();
    EXPECT_EQ(confirm_exec(started).error, 0);
  }
  bool answers() {
    if (!util::write_all(input.write_end.get(), "ping\n")) return false;
    return read_line(started.stdout_pipe.get()) == "ping\n";
  }
  // Ends it normally; returns the wait status.
  int stop() {
    input.write_end.reset();
    return reap(started.pid);
  }
};

// SIGPIPE ignored while it lives: writing to a worker or watchdog that a
// broken feature let die must fail the test, not end the test binary.
class IgnoreSigpipe {
 public:
  IgnoreSigpipe() {
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    ::sigaction(SIGPIPE, &ignore, &old_);
  }
  ~IgnoreSigpipe() { ::sigaction(SIGPIPE, &old_, nullptr); }

 private:
  struct sigaction old_ {};
};

TEST(Watchdog, ARegisteredGroupIsKilledWhenTheLauncherSideCloses) {
  auto watchdog = std::make_unique<Watchdog>();
  // The leader execs a sleep; a second sleep in its group holds stdout too.
  StartedWorker worker = start_worker({"/bin/sh", "-c", "sleep 300 & exec sleep 300"},
                                      util::Environment::from_process());
  ASSERT_EQ(confirm_exec(worker).error, 0);
  watchdog->watch(worker.pid);
  watchdog.reset();  // as when the launcher dies: the pipe closes
  // The whole group: the background sleep is gone too, so stdout ends.
  bool group_gone = reaches_eof(worker.stdout_pipe.get(), 10s);
  ::kill(-worker.pid, SIGKILL);  // only does something when the test fails
  int status = reap(worker.pid);
  EXPECT_TRUE(group_gone);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
}

TEST(Watchdog, AReleasedGroupIsSpared) {
  IgnoreSigpipe ignore_sigpipe;
  auto watchdog = std::make_unique<Watchdog>();
  EchoWorker released;
  EchoWorker watched;
  watchdog->watch(released.started.pid);
  watchdog->watch(watched.started.pid);
  watchdog->release(released.started.pid);
  watchdog.reset();  // the watchdog has sent its signals by the time it is reaped
  EXPECT_TRUE(released.answers());
  int released_status = released.stop();
  EXPECT_TRUE(WIFEXITED(released_status));
  int watched_status = watched.stop();
  EXPECT_TRUE(WIFSIGNALED(watched_status) && WTERMSIG(watched_status) == SIGKILL) << watched_status;
}

TEST(Watchdog, NothingIsKilledWhenNothingIsRegistered) {
  IgnoreSigpipe ignore_sigpipe;
  EchoWorker worker;
  { Watchdog watchdog; }
  EXPECT_TRUE(worker.answers());
  EXPECT_TRUE(WIFEXITED(worker.stop()));
}

TEST(Watchdog, HoldsNoEndOfTheCallersPipes) {
  // Inherited across the fork (no close-on-exec needed: the watchdog does not exec).
  util::Pipe callers = util::make_pipe();
  Watchdog watchdog;
  callers.write_end.reset();
  // A shell's $(...) around the launcher would otherwise wait for the watchdog.
  EXPECT_TRUE(reaches_eof(callers.read_end.get(), 10s));
}

// How many descriptors PID has open; -1 when it cannot be read.
int open_descriptors(pid_t pid) {
  std::error_code error;
  int count = 0;
  for (std::filesystem::directory_iterator it("/proc/" + std::to_string(pid) + "/fd", error), end;
       !error && it != end; it.increment(error))
    ++count;
  return error ? -1 : count;
}

TEST(Watchdog, LeadsAGroupOfItsOwnAndOutlivesTheLaunchersStopSignals) {
  IgnoreSigpipe ignore_sigpipe;
  // Two more descriptors it inherits, so it starts with more than four.
  util::Pipe inherited = util::make_pipe();
  auto watchdog = std::make_unique<Watchdog>();
  pid_t pid = watchdog->pid();
  // Its group, its signals and its descriptors are set up in that order
  // after the fork; once it holds only stdin/out/err and its pipe, all are.
  auto give_up = Clock::now() + 10s;
  while (open_descriptors(pid) != 4 && Clock::now() < give_up) std::this_thread::sleep_for(1ms);
  ASSERT_EQ(open_descriptors(pid), 4);
  EXPECT_EQ(::getpgid(pid), pid);
  EXPECT_NE(::getpgid(pid), ::getpgrp());
  for (int stop : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGPIPE}) ::kill(pid, stop);
  // Still watching: a group registered now is killed when the pipe closes.
  EchoWorker worker;
  watchdog->watch(worker.started.pid);
  watchdog.reset();
  EXPECT_FALSE(worker.answers());
  int status = worker.stop();
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
}

}  // namespace
}  // namespace dlaunch::process
