// Output relaying: whole prefixed lines, files unchanged, tails for the
// summary, and a log file that fails.
#include "process/stream_relay.h"
#include "../test_support/temp_dir.h"

#include <gtest/gtest.h>
#include <csignal>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

namespace dlaunch::process {
namespace {

std::string drain(int fd) {
  std::string all;
  char buffer[4096];
  ssize_t got;
  while ((got = ::read(fd, buffer, sizeof(buffer))) > 0) all.append(buffer, static_cast<std::size_t>(got));
  return all;
}

// A console in memory: a memfd (a regular file, so the sink writes plainly).
struct MemoryConsole {
  util::Fd fd{::memfd_create("console", MFD_CLOEXEC)};
  util::ConsoleSink sink{fd.get()};
  std::string text() {
    ::lseek(fd.get(), 0, SEEK_SET);
    return drain(fd.get());
  }
};

StreamRelay::Outputs to_console(util::ConsoleSink* console, bool shown = true) {
  StreamRelay::Outputs outputs;
  outputs.console = console;
  outputs.shown = shown;
  return outputs;
}

TEST(StreamRelay, PrefixesWholeLinesAcrossChunks) {
  util::Pipe console = util::make_pipe();
  {
    util::ConsoleSink sink(console.write_end.get());
    StreamRelay relay("[rank1]:", to_console(&sink));
    relay.feed("hel");
    relay.feed("lo\nwor");
    relay.feed("ld\n\nlast");
    relay.finish();
  }
  console.write_end.reset();
  EXPECT_EQ(drain(console.read_end.get()), "[rank1]:hello\n[rank1]:world\n[rank1]:\n[rank1]:last\n");
}

TEST(StreamRelay, FileGetsTheBytesUnchanged) {
  MemoryConsole console;
  util::Pipe file = util::make_pipe();
  {
    StreamRelay::Outputs outputs = to_console(&console.sink);
    outputs.file = std::move(file.write_end);
    StreamRelay relay("[r]:", std::move(outputs));
    relay.feed("a\nb");
    relay.finish();
    EXPECT_FALSE(relay.file_fault());
  }
  EXPECT_EQ(drain(file.read_end.get()), "a\nb");
  EXPECT_EQ(console.text(), "[r]:a\n[r]:b\n");
}

TEST(StreamRelay, HiddenStreamStillFeedsTheTail) {
  OutputTail tail;
  StreamRelay::Outputs outputs;
  outputs.tail = &tail;
  StreamRelay relay("[r]:", std::move(outputs));
  relay.feed("one\ntwo\nthree\n");
  EXPECT_EQ(tail.last_lines(2), (std::vector<std::string>{"two", "three"}));
  EXPECT_EQ(tail.last_lines(10).size(), 3u);
}

TEST(OutputTail, KeepsOnlyRecentBytes) {
  OutputTail tail;
  for (int i = 0; i < 100000; ++i) tail.append("line " + std::to_string(i) + "\n");
  EXPECT_EQ(tail.last_lines(1), (std::vector<std::string>{"line 99999"}));
  auto lines = tail.last_lines(3);
  EXPECT_EQ(lines.front(), "line 99997");
}

TEST(StreamRelay, OverlongLineIsShownInPieces) {
  // A memory file, not a pipe: the relay writes more than a pipe holds.
  MemoryConsole console;
  std::string huge(StreamRelay::kMaxHeldLine + 10, 'x');
  {
    StreamRelay relay("[r]:", to_console(&console.sink));
    relay.feed(huge);  // held no longer than kMaxHeldLine: shown as its own piece
    relay.feed("end\n");
    relay.finish();
  }
  std::string shown = console.text();
  EXPECT_EQ(std::count(shown.begin(), shown.end(), '\n'), 2);
  EXPECT_TRUE(shown.ends_with("[r]:end\n"));
  EXPECT_EQ(std::count(shown.begin(), shown.end(), 'x'), static_cast<long>(huge.size()));
}

// A relay whose file is /dev/full: every write fails with ENOSPC.
TEST(StreamRelay, AFullDiskIsReportedOnceAndTheConsoleStillGetsEverything) {
  MemoryConsole console;
  std::vector<LogFileFault> reported;
  StreamRelay::Outputs outputs = to_console(&console.sink);
  outputs.file = util::Fd(::open("/dev/full", O_WRONLY | O_CLOEXEC));
  ASSERT_TRUE(outputs.file.valid());
  outputs.on_file_fault = [&](const LogFileFault& fault) { reported.push_back(fault); };
  StreamRelay relay("[r]:", std::move(outputs));
  relay.feed("one\ntwo\n");
  relay.feed("three\n");
  relay.finish();
  ASSERT_EQ(reported.size(), 1u);
  EXPECT_EQ(reported[0].error, ENOSPC);
  EXPECT_TRUE(reported[0].created);
  EXPECT_EQ(reported[0].filed_bytes, 0u);
  EXPECT_EQ(reported[0].lost_bytes, 8u);  // the chunk that failed
  ASSERT_TRUE(relay.file_fault());
  EXPECT_EQ(relay.file_fault()->lost_bytes, 14u);  // and everything since
  EXPECT_EQ(console.text(), "[r]:one\n[r]:two\n[r]:three\n");
}

// Lets a test's writes to regular files fail with EFBIG beyond LIMIT bytes,
// as a full disk would, without a full disk; restored on destruction.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t limit) {
    ::getrlimit(RLIMIT_FSIZE, &saved_);
    previous_ = ::signal(SIGXFSZ, SIG_IGN);
    rlimit lowered = saved_;
    lowered.rlim_cur = limit;
    ::setrlimit(RLIMIT_FSIZE, &lowered);
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &saved_);
    ::signal(SIGXFSZ, previous_);
  }

 private:
  rlimit saved_{};
  sighandler_t previous_;
};

class StreamRelayFile : public ::testing::Test {
 protected:
  util::Fd create(const std::string& name) {
    path_ = folder_ + "/" + name;
    return util::Fd(::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  }
  std::string file_text() {
    util::Fd file(::open(path_.c_str(), O_RDONLY | O_CLOEXEC));
    return drain(file.get());
  }

  test_support::TempDir temp_;
  std::string folder_ = temp_.path();
  std::string path_;
};

// A console in a pipe, for tests that limit the size of regular files.
struct PipeConsole {
  util::Pipe pipe = util::make_pipe();
  util::ConsoleSink sink{pipe.write_end.get()};
  std::string text() {
    ::fcntl(pipe.read_end.get(), F_SETFL, O_NONBLOCK);
    return drain(pipe.read_end.get());
  }
};

// -r: the file only, until it fails in the middle of a line; the console
// then starts at that line's first byte, so it shows no half line, and
// nothing is lost.
TEST_F(StreamRelayFile, AFileOnlyStreamMovesToTheConsoleFromTheLineTheFileMissed) {
  PipeConsole console;
  StreamRelay::Outputs outputs = to_console(&console.sink, /*shown=*/false);
  outputs.file = create("stdout.log");
  StreamRelay relay("[r]:", std::move(outputs));
  {
    FileSizeLimit limit(10);
    relay.feed("aaa\nbbb\ncc");  // 10 bytes: all filed
    relay.feed("c\nddd\n");      // the file is full: "ccc" began in the previous chunk
    relay.feed("eee\n");
  }
  relay.finish();
  EXPECT_EQ(file_text(), "aaa\nbbb\ncc");
  ASSERT_TRUE(relay.file_fault());
  EXPECT_EQ(relay.file_fault()->error, EFBIG);
  EXPECT_EQ(relay.file_fault()->filed_bytes, 10u);
  EXPECT_EQ(relay.file_fault()->lost_bytes, 10u);
  EXPECT_EQ(console.text(), "[r]:ccc\n[r]:ddd\n[r]:eee\n");
}

TEST_F(StreamRelayFile, ACutInsideTheChunkShowsFromThatLinesStart) {
  PipeConsole console;
  StreamRelay::Outputs outputs = to_console(&console.sink, /*shown=*/false);
  outputs.file = create("stdout.log");
  StreamRelay relay("[r]:", std::move(outputs));
  {
    FileSizeLimit limit(6);
    relay.feed("aaa\nbbbb\ncc\n");  // the file takes "aaa\nbb"
  }
  relay.finish();
  EXPECT_EQ(file_text(), "aaa\nbb");
  EXPECT_EQ(console.text(), "[r]:bbbb\n[r]:cc\n");
  ASSERT_TRUE(relay.file_fault());
  EXPECT_EQ(relay.file_fault()->filed_bytes, 6u);
  EXPECT_EQ(relay.file_fault()->lost_bytes, 6u);
}

TEST(StreamRelay, AFileThatCouldNotBeCreatedSendsTheStreamToTheConsole) {
  MemoryConsole console;
  std::vector<LogFileFault> reported;
  StreamRelay::Outputs outputs = to_console(&console.sink, /*shown=*/false);
  outputs.file_error = EACCES;
  outputs.on_file_fault = [&](const LogFileFault& fault) { reported.push_back(fault); };
  StreamRelay relay("[r]:", std::move(outputs));
  ASSERT_EQ(reported.size(), 1u);  // at once, before any output
  EXPECT_FALSE(reported[0].created);
  EXPECT_EQ(reported[0].error, EACCES);
  relay.feed("x\n");
  EXPECT_EQ(relay.file_fault()->lost_bytes, 2u);
  EXPECT_EQ(console.text(), "[r]:x\n");
}

TEST(StreamRelay, UnderDropLinesOfAStalledConsoleAreCountedAsFiledWhileTheFileHoldsThem) {
  util::Pipe console = util::make_pipe();
  ::fcntl(console.write_end.get(), F_SETPIPE_SZ, 4096);
  util::ConsoleSink sink(console.write_end.get(), /*capacity=*/0);
  sink.set_overflow(util::ConsoleOverflow::kDrop);
  util::Pipe file = util::make_pipe();
  StreamRelay::Outputs outputs = to_console(&sink);
  outputs.file = std::move(file.write_end);
  StreamRelay relay("[r]:", std::move(outputs));
  std::string line(1000, 'x');
  line.push_back('\n');
  for (int i = 0; i < 8; ++i) relay.feed(line);  // the console pipe holds 4 of them
  EXPECT_GT(sink.dropped().filed, 0u);
  EXPECT_EQ(sink.dropped().unfiled, 0u);
}

// The default: a stalled console says full, the relay says so to its
// reader (which stops reading), and nothing is dropped.
TEST(StreamRelay, AStalledConsoleHoldsTheReaderBackAndDropsNothing) {
  util::Pipe console = util::make_pipe();
  ::fcntl(console.write_end.get(), F_SETPIPE_SZ, 4096);
  util::ConsoleSink sink(console.write_end.get(), /*capacity=*/4096);
  StreamRelay relay("[r]:", to_console(&sink));
  std::string line(1000, 'x');
  line.push_back('\n');
  int fed = 0;
  for (; fed < 100 && !relay.console_full(); ++fed) relay.feed(line);
  EXPECT_TRUE(relay.console_full());
  EXPECT_LT(fed, 20);
  EXPECT_FALSE(relay.console_has_room());
  EXPECT_EQ(sink.dropped().total(), 0u);
  // A relay whose stream the console does not show is never held back.
  StreamRelay hidden("[h]:", to_console(&sink, /*shown=*/false));
  EXPECT_FALSE(hidden.console_full());
  EXPECT_TRUE(hidden.console_has_room());
}

using Clock = StreamRelay::Clock;
using std::chrono::milliseconds;

// The start of a line waits kPartialDelay for its end, then shows; its
// end continues it on the console.
TEST(StreamRelay, ALinesStartIsShownAfterTheDelayAndItsEndContinuesIt) {
  MemoryConsole console;
  StreamRelay relay("[r]:", to_console(&console.sink));
  Clock::time_point start = Clock::now();
  EXPECT_FALSE(relay.partial_due());
  relay.feed("loading", start);
  ASSERT_TRUE(relay.partial_due());
  EXPECT_EQ(*relay.partial_due(), start + StreamRelay::kPartialDelay);
  EXPECT_EQ(console.text(), "");
  relay.show_partial();
  EXPECT_EQ(console.text(), "[r]:loading");
  EXPECT_FALSE(relay.partial_due()) << "nothing new to show";
  relay.feed("... done\nnext\n", start + milliseconds(500));
  EXPECT_EQ(console.text(), "[r]:loading... done\n[r]:next\n");
}

// A line whose end comes within the delay is shown whole, once.
TEST(StreamRelay, ALineWrittenInTwoPiecesWithinTheDelayIsShownWhole) {
  MemoryConsole console;
  StreamRelay relay("[r]:", to_console(&console.sink));
  Clock::time_point start = Clock::now();
  relay.feed("hel", start);
  relay.feed("lo\n", start + milliseconds(50));
  EXPECT_FALSE(relay.partial_due());
  EXPECT_EQ(console.text(), "[r]:hello\n");
}

// A '\r' progress bar is redrawn under its prefix: '\r', the prefix, the
// new drawing, spaces over what is left of a longer old one. The file gets
// the worker's bytes unchanged.
TEST(StreamRelay, AProgressBarIsRedrawnUnderItsPrefix) {
  MemoryConsole console;
  util::Fd file(::memfd_create("file", MFD_CLOEXEC));
  StreamRelay::Outputs outputs = to_console(&console.sink);
  outputs.file = util::Fd(::dup(file.get()));
  StreamRelay relay("[r]:", std::move(outputs));
  Clock::time_point now = Clock::now();
  std::string written;
  auto step = [&](std::string_view chunk) {
    written.append(chunk);
    now += milliseconds(500);
    relay.feed(chunk, now);
    if (relay.partial_due()) relay.show_partial();
  };
  step("\r 10%|#");
  EXPECT_EQ(console.text(), "[r]: 10%|#");
  step("\r 20%|##");
  EXPECT_EQ(console.text(), "[r]: 10%|#\r[r]: 20%|##");
  step("\r 2/9");
  EXPECT_EQ(console.text(), "[r]: 10%|#\r[r]: 20%|##\r[r]: 2/9   ");
  step("\r100%|###\n");
  EXPECT_EQ(console.text(), "[r]: 10%|#\r[r]: 20%|##\r[r]: 2/9   \r[r]:100%|###\n");
  ::lseek(file.get(), 0, SEEK_SET);
  EXPECT_EQ(drain(file.get()), written);
}

// Updates that come faster than the delay are shown as the latest drawing,
// at most once per delay: a bar redrawn 1,000 times a second does not
// write 1,000 lines' worth to the console.
TEST(StreamRelay, FastUpdatesShowOnlyTheLatestDrawing) {
  MemoryConsole console;
  StreamRelay relay("[r]:", to_console(&console.sink));
  Clock::time_point now = Clock::now();
  for (int percent = 0; percent < 50; ++percent) {
    std::string drawing = std::to_string(percent);  // "\r" + ... trips GCC 12's -Wrestrict
    drawing.insert(0, 1, '\r');
    drawing.push_back('%');
    relay.feed(drawing, now);
  }
  relay.show_partial();
  EXPECT_EQ(console.text(), "[r]:49%");
}

// Another writer's line ends the bar where it stands; the bar's next
// drawing starts on a line of its own.
TEST(StreamRelay, ABarInterruptedByAnotherRankStartsAfresh) {
  MemoryConsole console;
  StreamRelay bar("[rank0]:", to_console(&console.sink));
  StreamRelay other("[rank1]:", to_console(&console.sink));
  Clock::time_point now = Clock::now();
  bar.feed("\r10%", now);
  bar.show_partial();
  other.feed("checkpoint saved\n", now);
  bar.feed("\r20%", now);
  bar.show_partial();
  bar.feed("\r30%\n", now);
  EXPECT_EQ(console.text(), "[rank0]:10%\n[rank1]:checkpoint saved\n[rank0]:20%\r[rank0]:30%\n");
}

// CRLF line ends (a Windows-minded program, a pty) show as plain lines.
TEST(StreamRelay, CrlfLinesShowAsPlainLines) {
  MemoryConsole console;
  StreamRelay relay("[r]:", to_console(&console.sink));
  relay.feed("one\r\ntwo\r");
  relay.feed("\nthree\r\n");
  EXPECT_EQ(console.text(), "[r]:one\n[r]:two\n[r]:three\n");
}

// The stream's end shows a held drawing with a newline.
TEST(StreamRelay, TheEndOfTheStreamEndsAShownBar) {
  MemoryConsole console;
  StreamRelay relay("[r]:", to_console(&console.sink));
  relay.feed("\r50%");
  relay.show_partial();
  relay.feed("\r60%");
  relay.finish();
  EXPECT_EQ(console.text(), "[r]:50%\r[r]:60%\n");
}

}  // namespace
}  // namespace dlaunch::process
