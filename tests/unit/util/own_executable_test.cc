// The program's own executable: an absolute path naming the very file this
// process runs.
#include "util/own_executable.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>

namespace dlaunch::util {
namespace {

TEST(OwnExecutable, IsTheAbsolutePathOfTheRunningProgram) {
  std::string path = own_executable();
  EXPECT_TRUE(std::filesystem::path(path).is_absolute()) << path;
  EXPECT_EQ(std::filesystem::path(path).filename(), "dlaunch_unit_tests");
  // The same file the kernel runs for this process (stat follows /proc/self/exe).
  struct stat named {};
  struct stat running {};
  ASSERT_EQ(::stat(path.c_str(), &named), 0) << path;
  ASSERT_EQ(::stat("/proc/self/exe", &running), 0);
  EXPECT_EQ(named.st_dev, running.st_dev);
  EXPECT_EQ(named.st_ino, running.st_ino);
}

}  // namespace
}  // namespace dlaunch::util
