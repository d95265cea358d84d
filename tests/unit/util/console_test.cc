// The console sink: never waits for its reader; by default tells its
// feeder to stop when full and drops nothing; under kDrop drops whole lines
// only, counts them, and delivers the rest in order once the reader is back.
#include "util/console.h"

#include <gtest/gtest.h>
#include <csignal>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <sstream>

#include "console_pipe.h"

namespace dlaunch::util {
namespace {

using test_support::numbered_line;
using test_support::SmallPipe;

// The numbers of the numbered lines in TEXT, checking that each is whole.
std::vector<int> line_numbers(const std::string& text, std::vector<std::string>* others = nullptr) {
  std::vector<int> numbers;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    int n = 0;
    if (std::sscanf(line.c_str(), "line %d ", &n) == 1 && line + "\n" == numbered_line(n)) {
      numbers.push_back(n);
    } else if (others != nullptr) {
      others->push_back(line);
    } else {
      ADD_FAILURE() << "not a whole line: '" << line.substr(0, 80) << "'";
    }
  }
  return numbers;
}

// Ignores SIGPIPE while it lives, as the launcher does: a console whose
// reader is gone must not kill the test.
struct NoSigpipe {
  sighandler_t previous = ::signal(SIGPIPE, SIG_IGN);
  ~NoSigpipe() { ::signal(SIGPIPE, previous); }
};

TEST(ConsoleSink, UnderDropItNeverWaitsForAReaderThatDoesNotReadAndDropsWholeLines) {
  SmallPipe console;
  ConsoleSink sink(console.writer(), /*capacity=*/8192);
  sink.set_overflow(ConsoleOverflow::kDrop);
  for (int n = 0; n < 2000; ++n) sink.write_lines(numbered_line(n), n % 2 == 0);  // 120 KB
  ConsoleDrops drops = sink.dropped();
  EXPECT_GT(drops.total(), 1700u);
  EXPECT_GT(drops.filed, 0u);
  EXPECT_GT(drops.unfiled, 0u);
  EXPECT_TRUE(sink.backlogged());
  EXPECT_GE(sink.watch_fd(), 0);

  // The reader comes back: it gets whole lines, in order, then the notice.
  std::string received;
  for (int i = 0; i < 100 && (sink.backlogged() || received.find("dropped") == std::string::npos); ++i) {
    received += console.read_now();
    sink.flush();
  }
  received += console.read_now();
  std::vector<std::string> others;
  std::vector<int> numbers = line_numbers(received, &others);
  EXPECT_TRUE(std::is_sorted(numbers.begin(), numbers.end()));
  EXPECT_EQ(std::adjacent_find(numbers.begin(), numbers.end()), numbers.end());  // none twice
  EXPECT_EQ(numbers.size() + drops.total(), 2000u);
  ASSERT_EQ(others.size(), 1u);
  EXPECT_EQ(others[0], "console stalled, " + std::to_string(drops.total()) + " lines dropped");
  EXPECT_FALSE(sink.backlogged());
}

TEST(ConsoleSink, TheRestOfALineTheConsoleTookInPartIsKeptBeyondTheCapacity) {
  SmallPipe console;
  ConsoleSink sink(console.writer(), /*capacity=*/0);
  sink.set_overflow(ConsoleOverflow::kDrop);
  std::string three = numbered_line(1, 3000) + numbered_line(2, 3000) + numbered_line(3, 3000);
  sink.write_lines(three, false);  // the pipe takes line 1 and part of line 2
  EXPECT_EQ(sink.dropped().unfiled, 1u);
  std::string received = console.read_now();
  sink.flush();
  received += console.read_now();
  sink.flush();
  received += console.read_now();
  EXPECT_EQ(received, numbered_line(1, 3000) + numbered_line(2, 3000) +
                          "console stalled, 1 lines dropped\n");
}

TEST(ConsoleSink, UnderDropMessagesHaveRoomBeyondTheCapacity) {
  SmallPipe console;
  ConsoleSink sink(console.writer(), /*capacity=*/1024);
  sink.set_overflow(ConsoleOverflow::kDrop);
  for (int n = 0; n < 200; ++n) sink.write_lines(numbered_line(n), false);
  ASSERT_GT(sink.dropped().total(), 0u);
  std::uint64_t dropped = sink.dropped().total();
  sink.write_message("dlaunch: the summary that matters");
  EXPECT_EQ(sink.dropped().total(), dropped);  // kept in the reserve
  std::string received;
  for (int i = 0; i < 100 && sink.backlogged(); ++i) {
    received += console.read_now();
    sink.flush();
  }
  received += console.read_now();
  EXPECT_NE(received.find("dlaunch: the summary that matters\n"), std::string::npos);
}

// The default: a console that does not read makes the sink full(), the
// feeder stops, and every line arrives once the reader is back, in order.
TEST(ConsoleSink, UnderBlockNothingIsDroppedAndTheFeederIsToldToStop) {
  SmallPipe console;
  ConsoleSink sink(console.writer(), /*capacity=*/8192);
  ASSERT_EQ(sink.overflow(), ConsoleOverflow::kBlock);
  int written = 0;
  for (; !sink.full() && written < 10000; ++written) sink.write_lines(numbered_line(written), written % 2 == 0);
  ASSERT_TRUE(sink.full()) << "a pipe of 4 KiB and a backlog of 8 KiB take some 200 lines";
  EXPECT_LT(written, 300);
  EXPECT_FALSE(sink.has_room());
  // A feeder that read one more chunk before it asked: kept, not dropped.
  for (int n = 0; n < 50; ++n) sink.write_lines(numbered_line(written++), false);
  EXPECT_EQ(sink.dropped().total(), 0u);

  std::string received;
  bool had_room_again = false;
  for (int i = 0; i < 1000 && sink.backlogged(); ++i) {
    received += console.read_now();
    sink.flush();
    had_room_again = had_room_again || sink.has_room();
  }
  received += console.read_now();
  EXPECT_TRUE(had_room_again);
  EXPECT_FALSE(sink.full());
  std::vector<int> numbers = line_numbers(received);
  ASSERT_EQ(numbers.size(), static_cast<std::size_t>(written));
  for (int n = 0; n < written; ++n) EXPECT_EQ(numbers[static_cast<std::size_t>(n)], n);
}

// Room comes back at half the capacity, not at the first byte written, so
// a feeder resumes for long runs rather than one chunk at a time.
TEST(ConsoleSink, UnderBlockRoomComesBackAtHalfTheCapacity) {
  SmallPipe console;
  ConsoleSink sink(console.writer(), /*capacity=*/8192);
  int written = 0;
  while (!sink.full()) sink.write_lines(numbered_line(written++), false);
  std::size_t backlog = sink.backlog_bytes();
  ASSERT_GE(backlog, 8192u);
  console.read_now();
  sink.flush();  // the pipe takes 4 KiB: more than half is left
  EXPECT_LT(sink.backlog_bytes(), backlog);
  EXPECT_EQ(sink.has_room(), sink.backlog_bytes() <= 4096);
  while (!sink.has_room()) {
    console.read_now();
    sink.flush();
  }
  EXPECT_LE(sink.backlog_bytes(), 4096u);
}

// A console that is gone for good (EPIPE) is not waited for: the sink
// never says full(), so its feeders go on (filing), and every line is
// counted as dropped.
TEST(ConsoleSink, UnderBlockABrokenConsoleIsNeverFull) {
  NoSigpipe no_sigpipe;
  SmallPipe console;
  ConsoleSink sink(console.writer(), /*capacity=*/1024);
  console.pipe.read_end.reset();
  for (int n = 0; n < 100; ++n) sink.write_lines(numbered_line(n), true);
  EXPECT_FALSE(sink.full());
  EXPECT_TRUE(sink.has_room());
  EXPECT_EQ(sink.dropped().filed, 100u);
}

// Messages under kBlock are bounded too (a hostile peer may make node 0
// log for as long as the console stalls): beyond four capacities and the
// reserve they are dropped and counted.
TEST(ConsoleSink, UnderBlockMessagesAreBoundedToo) {
  SmallPipe console;
  ConsoleSink sink(console.writer(), /*capacity=*/1024);
  std::string message(1000, 'm');
  for (int n = 0; n < 1000; ++n) sink.write_message(message);
  EXPECT_LE(sink.backlog_bytes(), 4 * 1024 + ConsoleSink::kMessageReserve);
  EXPECT_GT(sink.dropped().unfiled, 0u);
}

// A line shown in part (a progress bar) stays open for its owner: the
// owner continues it; any other writer ends it first, and the owner then
// starts afresh.
TEST(ConsoleSink, AnOpenLineIsEndedBeforeAnyoneElseWrites) {
  SmallPipe console;
  ConsoleSink sink(console.writer());
  int bar = 0, other = 0;
  sink.write_owned(&bar, OwnedText{"", "[rank0]: 10%"}, false, false);
  sink.write_owned(&bar, OwnedText{"\r[rank0]: 20%", "[rank0]: 20%"}, false, false);
  EXPECT_EQ(console.read_now(), "[rank0]: 10%\r[rank0]: 20%");
  sink.write_owned(&other, OwnedText{"", "[rank1]: ready\n"}, true, false);
  EXPECT_EQ(console.read_now(), "\n[rank1]: ready\n");
  sink.write_owned(&bar, OwnedText{"\r[rank0]: 30%", "[rank0]: 30%"}, false, false);
  sink.write_message("dlaunch: a message");
  sink.write_owned(&bar, OwnedText{" done\n", "[rank0]: 30% done\n"}, true, false);
  EXPECT_EQ(console.read_now(), "[rank0]: 30%\ndlaunch: a message\n[rank0]: 30% done\n");
  sink.write_lines("[rank1]: next\n", false);
  EXPECT_EQ(console.read_now(), "[rank1]: next\n") << "a line its owner ended is not ended again";
}

// The notice of dropped lines ends an open line too.
TEST(ConsoleSink, TheDropNoticeEndsAnOpenLine) {
  SmallPipe console;
  ConsoleSink sink(console.writer(), /*capacity=*/100);
  sink.set_overflow(ConsoleOverflow::kDrop);
  int bar = 0;
  for (int n = 0; n < 200; ++n) sink.write_lines(numbered_line(n), false);
  ASSERT_GT(sink.dropped().total(), 0u);
  sink.write_owned(&bar, OwnedText{"", "[rank0]: 10%"}, false, false);
  std::string received;
  for (int i = 0; i < 100 && (sink.backlogged() || received.find("dropped") == std::string::npos); ++i) {
    received += console.read_now();
    sink.flush();
  }
  received += console.read_now();
  EXPECT_NE(received.find("[rank0]: 10%\nconsole stalled, "), std::string::npos) << received;
}

TEST(ConsoleSink, DrainWaitsOnlyUntilTheDeadline) {
  SmallPipe console;
  ConsoleSink sink(console.writer());
  std::string line = numbered_line(0, 1000);
  for (int n = 0; n < 10; ++n) sink.write_lines(line, false);
  ASSERT_TRUE(sink.backlogged());
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(sink.drain(start + std::chrono::milliseconds(100)));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  // Abandoned lines count as unwritten, not as dropped.
  sink.abandon();
  EXPECT_FALSE(sink.backlogged());
  EXPECT_GT(sink.unwritten().total(), 0u);
  EXPECT_EQ(sink.dropped().total(), 0u);
  // A reader that reads lets drain() finish.
  std::thread reader([&] {
    for (int i = 0; i < 200 && console.read_now().find("end") == std::string::npos; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  });
  sink.write_message("end");
  EXPECT_TRUE(sink.drain(std::chrono::steady_clock::now() + std::chrono::seconds(10)));
  reader.join();
}

TEST(ConsoleSink, TheCallersDescriptorStaysBlocking) {
  SmallPipe console;
  ConsoleSink sink(console.writer());
  EXPECT_EQ(::fcntl(console.writer(), F_GETFL) & O_NONBLOCK, 0);
  EXPECT_NE(sink.watch_fd(), console.writer());  // a description of its own
}

TEST(ConsoleSink, AClosedReaderBreaksTheConsoleAndEveryLineIsCounted) {
  NoSigpipe no_sigpipe;
  SmallPipe console;
  ConsoleSink sink(console.writer());
  console.pipe.read_end.reset();
  sink.write_lines(numbered_line(0) + numbered_line(1), true);
  sink.write_message("a message");
  EXPECT_EQ(sink.error(), EPIPE);
  EXPECT_EQ(sink.dropped().filed, 2u);
  EXPECT_EQ(sink.dropped().unfiled, 1u);
  EXPECT_FALSE(sink.backlogged());
  EXPECT_EQ(sink.watch_fd(), -1);
}

TEST(ConsoleSink, ASocketIsWrittenWithoutWaiting) {
  int ends[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends), 0);
  Fd ours(ends[0]), peer(ends[1]);
  int size = 4096;
  ::setsockopt(ours.get(), SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
  ConsoleSink sink(ours.get(), /*capacity=*/4096);
  for (int n = 0; n < 5000 && !sink.full(); ++n) sink.write_lines(numbered_line(n), false);
  EXPECT_TRUE(sink.full());
  EXPECT_EQ(sink.dropped().total(), 0u);
  EXPECT_EQ(sink.watch_fd(), ours.get());
}

TEST(ConsoleSink, ARegularFileIsWrittenPlainly) {
  Fd file(::memfd_create("console", MFD_CLOEXEC));
  ConsoleSink sink(file.get());
  for (int n = 0; n < 3000; ++n) sink.write_lines(numbered_line(n), false);
  EXPECT_EQ(sink.dropped().total(), 0u);
  EXPECT_EQ(sink.watch_fd(), -1);
  EXPECT_EQ(::lseek(file.get(), 0, SEEK_CUR), 3000 * 60);
}

TEST(ConsoleSink, OneSinkServesTwoDescriptorsOfOnePipe) {
  SmallPipe console;
  Fd copy(::dup(console.writer()));
  ConsoleSink sink(console.writer());
  EXPECT_TRUE(sink.same_stream(copy.get()));
  Fd file(::memfd_create("console", MFD_CLOEXEC));
  ConsoleSink file_sink(file.get());
  Fd file_copy(::dup(file.get()));
  EXPECT_FALSE(file_sink.same_stream(file_copy.get()));  // files keep their own offsets
}

// Node 0's rendezvous thread logs while the event loop relays: every line
// arrives whole, each thread's in its order.
TEST(ConsoleSink, LinesOfSeveralThreadsNeverTear) {
  Pipe console = make_pipe();
  std::string received;
  std::thread reader([&] {
    char buffer[65536];
    ssize_t got;
    while ((got = ::read(console.read_end.get(), buffer, sizeof(buffer))) > 0)
      received.append(buffer, static_cast<std::size_t>(got));
  });
  {
    ConsoleSink sink(console.write_end.get(), /*capacity=*/64 << 20);
    auto writer = [&](int first) {
      for (int n = first; n < first + 3000; ++n) {
        if (n % 3 == 0) sink.write_message(numbered_line(n));
        else sink.write_lines(numbered_line(n) + numbered_line(n + 100000), false);
      }
    };
    std::thread one(writer, 0), two(writer, 10000);
    one.join();
    two.join();
    EXPECT_TRUE(sink.drain(std::chrono::steady_clock::now() + std::chrono::seconds(30)));
  }
  console.write_end.reset();
  reader.join();
  std::vector<int> numbers = line_numbers(received);
  std::vector<int> first, second;
  for (int n : numbers) {
    if (n < 10000) first.push_back(n);
    else if (n < 100000) second.push_back(n);
  }
  EXPECT_EQ(first.size(), 3000u);
  EXPECT_EQ(second.size(), 3000u);
  EXPECT_TRUE(std::is_sorted(first.begin(), first.end()));
  EXPECT_TRUE(std::is_sorted(second.begin(), second.end()));
}

}  // namespace
}  // namespace dlaunch::util
