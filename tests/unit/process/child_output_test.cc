// A child's two pipes relayed in an event loop: every byte reaches its
// stream's console, in order, prefixed per line; the tail keeps the last
// lines of both; a pipe's end is reported once; a writer that holds a pipe
// open is cut off by drain_and_close without losing what it already wrote.
#include "process/child_output.h"

#include <gtest/gtest.h>
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

TEST(ChildOutput, RelaysBothPipesUntilTheyEndAndKeepsTheTail) {
  EventLoop loop;
  Consoles consoles;
  ChildOutput output("[rank0]: ", [&] {
    StreamRelay::Outputs out;
    out.console = &consoles.out;
    return out;
  }(), [&] {
    StreamRelay::Outputs err;
    err.console = &consoles.err;
    return err;
  }());
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
  ChildOutput output("", [&] {
    StreamRelay::Outputs out;
    out.console = &consoles.out;
    return out;
  }(), StreamRelay::Outputs{});
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
  ChildOutput output("> ", [&] {
    StreamRelay::Outputs out;
    out.console = &consoles.out;
    return out;
  }(), StreamRelay::Outputs{});
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

}  // namespace
}  // namespace dlaunch::process
