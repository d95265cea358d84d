#include "jobs/log_merge.h"

#include <fstream>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../test_support/temp_dir.h"

namespace dlaunch::jobs {
namespace {

void write(const std::string& path, const std::string& text) {
  std::ofstream file(path, std::ios::app);
  file << text;
}

std::vector<std::string> merged(std::vector<std::unique_ptr<LogLineSource>>& sources) {
  std::vector<std::string> lines;
  merge_available(sources, [&](const MergedLine& line) {
    lines.push_back(std::to_string(line.rank) + ":" + line.text);
  });
  return lines;
}

TEST(MergeAvailable, OrdersLinesOfSeveralFilesByTheirIndexTimes) {
  test_support::TempDir dir;
  write(dir.path() + "/a.log", "a1\na2\na3\n");
  write(dir.path() + "/a.times", "0 1000\n3 3000\n");  // a1 at 1 s; a2, a3 at 3 s
  write(dir.path() + "/b.log", "b1\nb2\n");
  write(dir.path() + "/b.times", "0 2000\n3 4000\n");  // b1 at 2 s, b2 at 4 s
  std::vector<std::unique_ptr<LogLineSource>> sources;
  sources.push_back(std::make_unique<LogLineSource>(0, 1, dir.path() + "/a.log"));
  sources.push_back(std::make_unique<LogLineSource>(1, 1, dir.path() + "/b.log"));
  EXPECT_EQ(merged(sources), (std::vector<std::string>{"0:a1", "1:b1", "0:a2", "0:a3", "1:b2"}));
}

TEST(MergeAvailable, WithoutIndexFilesKeepsRankOrder) {
  test_support::TempDir dir;
  write(dir.path() + "/a.log", "a1\n");
  write(dir.path() + "/b.log", "b1\n");
  std::vector<std::unique_ptr<LogLineSource>> sources;
  sources.push_back(std::make_unique<LogLineSource>(1, 1, dir.path() + "/b.log"));
  sources.push_back(std::make_unique<LogLineSource>(0, 1, dir.path() + "/a.log"));
  EXPECT_EQ(merged(sources), (std::vector<std::string>{"0:a1", "1:b1"}));
}

TEST(LogLineSource, HoldsAnUnfinishedLineUntilItEndsOrTheFileIsDone) {
  test_support::TempDir dir;
  const std::string path = dir.path() + "/a.log";
  write(path, "one\ntw");
  LogLineSource source(0, 1, path);
  MergedLine line;
  ASSERT_TRUE(source.next(line));
  EXPECT_EQ(line.text, "one");
  EXPECT_FALSE(source.next(line));
  write(path, "o\nthr");
  ASSERT_TRUE(source.next(line));
  EXPECT_EQ(line.text, "two");
  EXPECT_FALSE(source.next(line));
  source.finish();
  ASSERT_TRUE(source.next(line));
  EXPECT_EQ(line.text, "thr");
  EXPECT_FALSE(source.next(line));
}

TEST(LogLineSource, CutsAnOverlongLineIntoBoundedPieces) {
  test_support::TempDir dir;
  const std::string path = dir.path() + "/a.log";
  write(path, std::string(kMaxLineBytes * 2 + 5, 'x') + "\n");
  LogLineSource source(0, 1, path);
  MergedLine line;
  std::vector<std::size_t> sizes;
  while (source.next(line)) sizes.push_back(line.text.size());
  EXPECT_EQ(sizes, (std::vector<std::size_t>{kMaxLineBytes, kMaxLineBytes, 5}));
}

TEST(LogLineSource, AMissingFileHasNoLines) {
  LogLineSource source(0, 1, "/nonexistent/dlaunch/a.log");
  source.finish();
  MergedLine line;
  EXPECT_FALSE(source.next(line));
}

TEST(LogLineSource, HeldPartIsTheStartOfTheLineWaitingForItsNewline) {
  test_support::TempDir dir;
  const std::string path = dir.path() + "/a.log";
  write(path, "one\ntwo\n 10%\r 20%");
  LogLineSource source(0, 2, path);
  EXPECT_EQ(source.stream(), 2);
  MergedLine line;
  ASSERT_TRUE(source.next(line));
  EXPECT_EQ(source.held_part(), std::nullopt) << "a whole line is still there to read";
  ASSERT_TRUE(source.next(line));
  EXPECT_FALSE(source.next(line));
  ASSERT_TRUE(source.held_part());
  EXPECT_EQ(*source.held_part(), " 10%\r 20%");
  EXPECT_EQ(source.held_offset(), 8u);
  write(path, "\r 30%");
  EXPECT_FALSE(source.next(line));
  EXPECT_EQ(*source.held_part(), " 10%\r 20%\r 30%") << "grown, the same line";
  EXPECT_EQ(source.held_offset(), 8u);
  write(path, "\nnext");
  ASSERT_TRUE(source.next(line));
  EXPECT_EQ(line.text, " 10%\r 20%\r 30%");
  EXPECT_FALSE(source.next(line));
  EXPECT_EQ(*source.held_part(), "next");
  EXPECT_EQ(source.held_offset(), 23u) << "a new line starts where the last one ended";
  source.finish();
  EXPECT_EQ(source.held_part(), std::nullopt) << "finished: the rest is a line";
  ASSERT_TRUE(source.next(line));
  EXPECT_EQ(line.text, "next");
}

TEST(LogLineSource, HoldsNothingAfterWholeLines) {
  test_support::TempDir dir;
  const std::string path = dir.path() + "/a.log";
  write(path, "one\ntwo\n");
  LogLineSource source(0, 1, path);
  MergedLine line;
  while (source.next(line)) {
  }
  EXPECT_EQ(source.held_part(), std::nullopt);
}

// Issue 24: a .times index pointing at /dev/zero made `dlaunch logs` run
// forever with growing memory. Only a regular file is an index.
TEST(LogLineSource, AnIndexLinkedToADeviceIsNoIndex) {
  test_support::TempDir dir;
  write(dir.path() + "/a.log", "a1\na2\n");
  ASSERT_EQ(::symlink("/dev/zero", (dir.path() + "/a.times").c_str()), 0);
  std::vector<std::unique_ptr<LogLineSource>> sources;
  sources.push_back(std::make_unique<LogLineSource>(0, 1, dir.path() + "/a.log"));
  EXPECT_EQ(merged(sources), (std::vector<std::string>{"0:a1", "0:a2"}));
}

TEST(LogLineSource, AnIndexOfGarbageWithoutNewlinesIsGivenUpInBoundedMemory) {
  test_support::TempDir dir;
  write(dir.path() + "/a.log", "a1\n");
  write(dir.path() + "/a.times", std::string(3 << 20, '\0'));
  LogLineSource source(0, 1, dir.path() + "/a.log");
  MergedLine line;
  ASSERT_TRUE(source.next(line));
  EXPECT_EQ(line.text, "a1");
  EXPECT_EQ(line.unix_ms, 0);
}

TEST(LogLineSource, AFifoOrALinkForALogHasNoLines) {
  test_support::TempDir dir;
  const std::string fifo = dir.path() + "/fifo.log";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  write(dir.path() + "/real.log", "secret\n");
  ASSERT_EQ(::symlink((dir.path() + "/real.log").c_str(), (dir.path() + "/link.log").c_str()), 0);
  for (const std::string& path : {fifo, dir.path() + "/link.log"}) {
    LogLineSource source(0, 1, path);
    source.finish();
    MergedLine line;
    EXPECT_FALSE(source.next(line)) << path;
  }
}

}  // namespace
}  // namespace dlaunch::jobs
