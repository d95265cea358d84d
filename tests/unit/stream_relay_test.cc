// Output relaying: whole prefixed lines, files unchanged, tails for the summary.
#include "launch/stream_relay.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>

namespace dlaunch {
namespace {

std::string drain(int fd) {
  std::string all;
  char buffer[4096];
  ssize_t got;
  while ((got = ::read(fd, buffer, sizeof(buffer))) > 0) all.append(buffer, static_cast<std::size_t>(got));
  return all;
}

TEST(StreamRelay, PrefixesWholeLinesAcrossChunks) {
  Pipe console = make_pipe();
  {
    StreamRelay relay("[rank1]:", console.write_end.get(), Fd(), nullptr);
    relay.feed("hel");
    relay.feed("lo\nwor");
    relay.feed("ld\n\nlast");
    relay.finish();
  }
  console.write_end.reset();
  EXPECT_EQ(drain(console.read_end.get()), "[rank1]:hello\n[rank1]:world\n[rank1]:\n[rank1]:last\n");
}

TEST(StreamRelay, FileGetsTheBytesUnchanged) {
  Pipe console = make_pipe();
  Pipe file = make_pipe();
  {
    StreamRelay relay("[r]:", console.write_end.get(), std::move(file.write_end), nullptr);
    relay.feed("a\nb");
    relay.finish();
  }
  console.write_end.reset();
  EXPECT_EQ(drain(file.read_end.get()), "a\nb");
  EXPECT_EQ(drain(console.read_end.get()), "[r]:a\n[r]:b\n");
}

TEST(StreamRelay, HiddenStreamStillFeedsTheTail) {
  OutputTail tail;
  StreamRelay relay("[r]:", -1, Fd(), &tail);
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
  Fd console(::memfd_create("console", MFD_CLOEXEC));
  std::string huge(StreamRelay::kMaxHeldLine + 10, 'x');
  {
    StreamRelay relay("[r]:", console.get(), Fd(), nullptr);
    relay.feed(huge);  // held no longer than kMaxHeldLine: shown as its own piece
    relay.feed("end\n");
    relay.finish();
  }
  ::lseek(console.get(), 0, SEEK_SET);
  std::string shown = drain(console.get());
  EXPECT_EQ(std::count(shown.begin(), shown.end(), '\n'), 2);
  EXPECT_TRUE(shown.ends_with("[r]:end\n"));
  EXPECT_EQ(std::count(shown.begin(), shown.end(), 'x'), static_cast<long>(huge.size()));
}

}  // namespace
}  // namespace dlaunch
