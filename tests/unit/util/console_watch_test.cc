// The event loop's side of the console sink: a backlogged console is
// watched for EPOLLOUT, and only while it has a backlog.
#include "util/console_watch.h"

#include <gtest/gtest.h>
#include <sys/epoll.h>

#include <cstdint>

#include "console_pipe.h"
#include "util/console.h"

namespace dlaunch {
namespace {

using test_support::numbered_line;
using test_support::SmallPipe;

TEST(ConsoleWatch, WatchesABackloggedConsoleUntilItDrains) {
  SmallPipe console;
  ConsoleSink sink(console.writer());
  Fd epoll(::epoll_create1(EPOLL_CLOEXEC));
  ConsoleWatch watch(epoll.get(), {&sink, &sink}, std::uint64_t{7} << 32);
  epoll_event event{};
  watch.update();
  EXPECT_EQ(::epoll_wait(epoll.get(), &event, 1, 0), 0);  // nothing to write: not watched
  for (int n = 0; n < 200; ++n) sink.write_lines(numbered_line(n), false);
  ASSERT_TRUE(sink.backlogged());
  watch.update();
  EXPECT_EQ(::epoll_wait(epoll.get(), &event, 1, 0), 0);  // the pipe is full
  console.read_now();
  ASSERT_EQ(::epoll_wait(epoll.get(), &event, 1, 1000), 1);
  EXPECT_EQ(event.data.u64, std::uint64_t{7} << 32);
  for (int i = 0; i < 100 && sink.backlogged(); ++i) {
    watch.on_writable(event.data.u64 & 0xffffffffu);
    console.read_now();
  }
  EXPECT_FALSE(sink.backlogged());
  watch.update();
  console.read_now();
  EXPECT_EQ(::epoll_wait(epoll.get(), &event, 1, 0), 0);  // no backlog: unwatched
}

}  // namespace
}  // namespace dlaunch
