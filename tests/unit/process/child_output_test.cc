// A child's two pipes relayed in an event loop: every byte reaches its
// stream's console, in order, prefixed per line; the tail keeps the last
// lines of both; a pipe's end is reported once; a writer that holds a pipe
// open is cut off by drain_and_close without losing what it already wrote.
#include "process/child_output.h"

#include <gtest/gtest.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "../util/console_pipe.h"
#include "process/event_loop.h"
#include "util/console.h"
#include "util/fd.h"

namespace dlaunch::process {
namespace {

using namespace std::chrono_literals;

struct Consoles {
  test_support::SmallPipe out_pipe, err_pipe;
  util::ConsoleSink out{out_pipe.writer()};
  util::ConsoleSink err{err_pipe.writer()};
};

// A stream shown on CONSOLE (and filed nowhere).
StreamRelay::Outputs to_console(util::ConsoleSink* console) {
  StreamRelay::Outputs outputs;
  outputs.console = console;
  return outputs;
}

TEST(ChildOutput, RelaysBothPipesUntilTheyEndAndKeepsTheTail) {
  EventLoop loop;
  Consoles consoles;
  ChildOutput output("[rank0]: ", to_console(&consoles.out), to_console(&consoles.err));
  util::Pipe out = util::make_pipe(), err = util::make_pipe();
  char buffer[64];
  int closed = 0;
  output.relay(loop, std::move(out.read_end), std::move(err.read_end), buffer, [&] { ++closed; });

  ASSERT_TRUE(util::write_all(out.write_end.get(), "one\ntwo\n"));
  ASSERT_TRUE(util::write_all(err.write_end.get(), "oops\n"));
  out.write_end.reset();
  err.write_end.reset();
  for (auto give_up = EventLoop::Clock::now() + 10s; closed < 2 && EventLoop::Clock::now() < give_up;)
    loop.run_once(1000ms);

  EXPECT_EQ(closed, 2);
  EXPECT_EQ(consoles.out_pipe.read_now(), "[rank0]: one\n[rank0]: two\n");
  EXPECT_EQ(consoles.err_pipe.read_now(), "[rank0]: oops\n");
  // Both streams' lines, in the order they were read (which pipe epoll
  // reports first is not fixed).
  auto tail = output.tail().last_lines(10);
  std::sort(tail.begin(), tail.end());
  EXPECT_EQ(tail, (std::vector<std::string>{"one", "oops", "two"}));
}

TEST(ChildOutput, ALongOutputArrivesWholeThroughASmallBuffer) {
  EventLoop loop;
  Consoles consoles;
  ChildOutput output("", to_console(&consoles.out), StreamRelay::Outputs{});
  util::Pipe out = util::make_pipe(), err = util::make_pipe();
  char buffer[7];  // one read per event, 7 bytes at most
  bool ended = false;
  output.relay(loop, std::move(out.read_end), std::move(err.read_end), buffer, [&] { ended = true; });
  std::string expected;
  for (int n = 0; n < 20; ++n) expected += test_support::numbered_line(n, 30);
  ASSERT_TRUE(util::write_all(out.write_end.get(), expected));
  out.write_end.reset();
  std::string seen;
  for (auto give_up = EventLoop::Clock::now() + 10s; !ended && EventLoop::Clock::now() < give_up;) {
    loop.run_once(1000ms);
    seen += consoles.out_pipe.read_now();
  }
  consoles.out.flush();
  seen += consoles.out_pipe.read_now();
  EXPECT_TRUE(ended);
  EXPECT_EQ(seen, expected);
}

TEST(ChildOutput, DrainAndCloseKeepsWhatWasWrittenAndStopsWatching) {
  EventLoop loop;
  Consoles consoles;
  ChildOutput output("> ", to_console(&consoles.out), StreamRelay::Outputs{});
  util::Pipe out = util::make_pipe(), err = util::make_pipe();
  char buffer[64];
  int closed = 0;
  const int out_fd = out.read_end.get();
  output.relay(loop, std::move(out.read_end), std::move(err.read_end), buffer, [&] { ++closed; });
  ASSERT_TRUE(util::write_all(out.write_end.get(), "kept\npartial"));
  // The writer keeps both pipes open (an escaped grandchild would).
  output.drain_and_close();
  EXPECT_EQ(closed, 2);
  EXPECT_FALSE(loop.watching(out_fd));
  EXPECT_EQ(consoles.out_pipe.read_now(), "> kept\n> partial\n");
}

// Bytes waiting in the pipe whose read end is FD.
int unread(int fd) {
  int bytes = 0;
  ::ioctl(fd, FIONREAD, &bytes);
  return bytes;
}

// Backpressure: a console that does not read leaves the child's pipe
// unread (its writes would wait) while the loop runs on; once the console
// has room the pipe is read again, and every line arrives, in order.
TEST(ChildOutput, AFullConsoleLeavesThePipeUnreadUntilItHasRoom) {
  EventLoop loop;
  test_support::SmallPipe console;
  util::ConsoleSink sink(console.writer(), /*capacity=*/4096);
  ChildOutput output("", to_console(&sink), StreamRelay::Outputs{});
  util::Pipe out = util::make_pipe(), err = util::make_pipe();
  const int out_fd = out.read_end.get();
  char buffer[1024];
  bool ended = false;
  output.relay(loop, std::move(out.read_end), std::move(err.read_end), buffer, [&] { ended = true; });
  std::string expected;
  for (int n = 0; n < 600; ++n) expected += test_support::numbered_line(n);  // 36 KB: the pipe holds it
  ASSERT_TRUE(util::write_all(out.write_end.get(), expected));
  out.write_end.reset();

  for (auto give_up = EventLoop::Clock::now() + 10s; !output.held_back() && EventLoop::Clock::now() < give_up;)
    loop.run_once(100ms);
  ASSERT_TRUE(output.held_back());
  EXPECT_FALSE(loop.watching(out_fd));
  const int left = unread(out_fd);
  EXPECT_GT(left, 20000) << "read no further than the console's capacity and a chunk";
  // Longer than StreamRelay::kPartialDelay: the start of the line the last
  // read cut (1024 bytes end mid-line) is not shown while the pipe is held
  // back (it would show as a fragment, then the line again whole).
  for (auto until = EventLoop::Clock::now() + 3 * StreamRelay::kPartialDelay; EventLoop::Clock::now() < until;)
    loop.run_once(20ms);
  // Another rank's line then lands between whole lines of this one.
  const std::string other = "[rank1]: a line of another rank\n";
  sink.write_lines(other, false);
  output.resume_if_room();  // no room yet: stays held back
  EXPECT_TRUE(output.held_back());
  EXPECT_EQ(unread(out_fd), left);
  EXPECT_EQ(sink.dropped().total(), 0u);

  std::string seen;
  for (auto give_up = EventLoop::Clock::now() + 10s; !ended && EventLoop::Clock::now() < give_up;) {
    seen += console.read_now();
    sink.flush();
    output.resume_if_room();
    loop.run_once(10ms);
  }
  while (sink.backlogged()) {
    seen += console.read_now();
    sink.flush();
  }
  seen += console.read_now();
  EXPECT_TRUE(ended);
  std::size_t at = seen.find(other);
  ASSERT_NE(at, std::string::npos) << seen;
  EXPECT_TRUE(at == 0 || seen[at - 1] == '\n') << "the other line starts a line of its own";
  seen.erase(at, other.size());
  EXPECT_EQ(seen, expected);
}

// A line without its end is shown on the loop's deadline, not when the
// next byte comes.
TEST(ChildOutput, ALinesStartIsShownWithoutWaitingForMoreOutput) {
  EventLoop loop;
  Consoles consoles;
  ChildOutput output("[rank0]: ", to_console(&consoles.out), StreamRelay::Outputs{});
  util::Pipe out = util::make_pipe(), err = util::make_pipe();
  char buffer[64];
  output.relay(loop, std::move(out.read_end), std::move(err.read_end), buffer, [] {});
  ASSERT_TRUE(util::write_all(out.write_end.get(), "\r 50%"));
  std::string seen;
  for (auto give_up = EventLoop::Clock::now() + 10s; seen.empty() && EventLoop::Clock::now() < give_up;) {
    loop.run_once(1000ms);
    seen += consoles.out_pipe.read_now();
  }
  EXPECT_EQ(seen, "[rank0]:  50%");
  ASSERT_TRUE(util::write_all(out.write_end.get(), "\r100%\n"));
  for (auto give_up = EventLoop::Clock::now() + 10s; seen.back() != '\n' && EventLoop::Clock::now() < give_up;) {
    loop.run_once(1000ms);
    seen += consoles.out_pipe.read_now();
  }
  EXPECT_EQ(seen, "[rank0]:  50%\r[rank0]: 100%\n");
}

}  // namespace
}  // namespace dlaunch::process
