#include "process/time_index.h"

#include <fcntl.h>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <sys/stat.h>

#include "../test_support/temp_dir.h"

namespace dlaunch::process {
namespace {

std::string read_all(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

util::Fd open_for_writing(const std::string& path) {
  return util::Fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NONBLOCK, 0644));
}

TEST(TimeIndex, MarksAtMostTenTimesASecond) {
  test_support::TempDir dir;
  std::string path = dir.path() + "/stdout.times";
  {
    TimeIndex index(open_for_writing(path));
    index.note(0, 1'000'100);
    index.note(10, 1'000'150);  // within 100 ms of the last mark: none
    index.note(25, 1'000'200);
    index.note(40, 1'005'500);
    index.note(50, 1'000'000);  // the clock went back: a mark, so order follows it
  }
  EXPECT_EQ(read_all(path), "0 1000100\n25 1000200\n40 1005500\n50 1000000\n");
}

TEST(TimeIndex, WithoutAFileItDoesNothing) {
  TimeIndex index;
  index.note(0, 1000);
  EXPECT_FALSE(index.active());
}

TEST(TimeIndex, AFifoWithoutReaderIsNoIndexAndNoHang) {
  test_support::TempDir dir;
  std::string path = dir.path() + "/stdout.times";
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  TimeIndex index(open_for_writing(path));  // O_NONBLOCK: ENXIO, not a wait
  index.note(0, 1000);
  EXPECT_FALSE(index.active());
}

// The marks of FED (fed in one piece), as "OFFSET@MS" words.
std::string marks_of(TimeMarks& marks) {
  std::string text;
  while (auto mark = marks.next()) text += std::to_string(mark->offset) + "@" + std::to_string(mark->unix_ms) + " ";
  return text;
}

TEST(ParseTimeMark, ReadsOffsetAndTimeOnly) {
  auto mark = parse_time_mark("120 1700000000123");
  ASSERT_TRUE(mark);
  EXPECT_EQ(mark->offset, 120u);
  EXPECT_EQ(mark->unix_ms, 1700000000123);
  for (const char* line : {"", "12", "12 ", " 12", "-1 5", "a 5", "1 2 3", "1  2", "99999999999999999999 1"})
    EXPECT_FALSE(parse_time_mark(line)) << line;
}

TEST(TimeMarks, SkipsLinesThatAreNoMarksAndWaitsForAWholeLine) {
  TimeMarks marks;
  marks.feed("0 1000\ngarbage\n5 20");
  EXPECT_EQ(marks_of(marks), "0@1000 ");
  marks.feed("00\n");
  EXPECT_EQ(marks_of(marks), "5@2000 ");
  EXPECT_FALSE(marks.given_up());
}

TEST(TimeMarks, ALineThatNeverEndsIsDroppedAsItComesNotKept) {
  TimeMarks marks;
  marks.feed("0 1000\n");
  for (int i = 0; i < 100; ++i) marks.feed(std::string(64 * 1024, '\0'));  // /dev/zero's kind
  EXPECT_EQ(marks_of(marks), "0@1000 ");
  marks.feed("rest of it\n7 7000\n");
  EXPECT_EQ(marks_of(marks), "7@7000 ");
}

TEST(TimeMarks, GivesUpOnBytesThatHoldNoMark) {
  TimeMarks marks;
  for (std::size_t fed = 0; fed <= TimeMarks::kMaxJunkBytes; fed += 64 * 1024) {
    marks.feed(std::string(64 * 1024, 'x'));
    EXPECT_FALSE(marks.next());
  }
  EXPECT_TRUE(marks.given_up());
}

TEST(TimeIndexPath, SitsBesideTheLog) {
  EXPECT_EQ(time_index_path("/a/rank0/stdout.log"), "/a/rank0/stdout.times");
  EXPECT_EQ(time_index_path("/a/out"), "/a/out.times");
}

}  // namespace
}  // namespace dlaunch::process
