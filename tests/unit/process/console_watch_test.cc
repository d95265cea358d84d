// The event loop's side of the console sink: a backlogged console is
// watched for room, and only while it has a backlog; the loop then writes
// the backlog as the reader makes room.
#include "process/console_watch.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "process/event_loop.h"
#include "util/console.h"
#include "../util/console_pipe.h"

namespace dlaunch::process {
namespace {

using std::chrono::milliseconds;
using test_support::numbered_line;
using test_support::SmallPipe;

TEST(ConsoleWatch, ANewWatchWatchesNothing) {
  EventLoop loop;
  SmallPipe console;
  util::ConsoleSink sink(console.writer());
  ConsoleWatch watch(loop, {&sink});
  watch.update();
  EXPECT_FALSE(loop.watching(console.writer()));
}

TEST(ConsoleWatch, WritesABackloggedConsoleAsItsReaderMakesRoom) {
  EventLoop loop;
  SmallPipe console;
  util::ConsoleSink sink(console.writer());
  ConsoleWatch watch(loop, {&sink, &sink});  // given twice, watched once
  std::string expected;
  for (int n = 0; n < 200; ++n) {
    expected += numbered_line(n);
    sink.write_lines(numbered_line(n), false);
  }
  ASSERT_TRUE(sink.backlogged());
  watch.update();
  ASSERT_TRUE(loop.watching(sink.watch_fd()));
  EXPECT_EQ(loop.run_once(milliseconds(0)), 0);  // the pipe is full: no room yet

  std::string seen = console.read_now();
  for (int batch = 0; batch < 100 && sink.backlogged(); ++batch) {
    EXPECT_EQ(loop.run_once(milliseconds(1000)), 1);  // room: the backlog's handler runs
    seen += console.read_now();
    watch.update();
  }
  seen += console.read_now();
  EXPECT_FALSE(sink.backlogged());
  EXPECT_EQ(seen, expected);  // every line, in order, none torn
  EXPECT_FALSE(loop.watching(console.writer()));  // no backlog: unwatched
}

TEST(ConsoleWatch, StopsWatchingWhenDestroyed) {
  EventLoop loop;
  SmallPipe console;
  util::ConsoleSink sink(console.writer());
  for (int n = 0; n < 200; ++n) sink.write_lines(numbered_line(n), false);
  {
    ConsoleWatch watch(loop, {&sink});
    watch.update();
    ASSERT_TRUE(loop.watching(sink.watch_fd()));
  }
  EXPECT_FALSE(loop.watching(sink.watch_fd()));
}

}  // namespace
}  // namespace dlaunch::process
