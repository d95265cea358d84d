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

TEST(TimeIndexPath, SitsBesideTheLog) {
  EXPECT_EQ(time_index_path("/a/rank0/stdout.log"), "/a/rank0/stdout.times");
  EXPECT_EQ(time_index_path("/a/out"), "/a/out.times");
}

}  // namespace
}  // namespace dlaunch::process
