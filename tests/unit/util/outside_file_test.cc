// Reading files someone else may have put in place: regular files only,
// never blocking on a FIFO, never reading a device, links refused where
// dlaunch wrote the file, sizes capped.
#include "util/outside_file.h"

#include <fstream>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../test_support/input_error.h"
#include "../test_support/temp_dir.h"

namespace dlaunch::util {
namespace {

constexpr OutsideFile kRecord{"a record dlaunch wrote", 1024, Links::kRefuse};
constexpr OutsideFile kUserFile{"the file you named", 1024, Links::kFollow};

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

TEST(ReadOutsideFile, ReadsARegularFileWhole) {
  test_support::TempDir dir;
  write(dir.path() + "/r", "one\ntwo\n");
  EXPECT_EQ(read_outside_file(dir.path() + "/r", kRecord), "one\ntwo\n");
}

TEST(ReadOutsideFile, NothingThereIsNullopt) {
  test_support::TempDir dir;
  EXPECT_EQ(read_outside_file(dir.path() + "/missing", kRecord), std::nullopt);
  EXPECT_EQ(read_outside_file(dir.path() + "/no/folder/file", kRecord), std::nullopt);
}

TEST(ReadOutsideFile, AFifoIsRefusedAtOnceNotWaitedOn) {
  test_support::TempDir dir;
  const std::string path = dir.path() + "/fifo";
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  // A blocking open would wait here for a writer that never comes.
  std::string error = test_support::input_error_of([&] { (void)read_outside_file(path, kRecord); });
  EXPECT_NE(error.find(path + " is a FIFO, where dlaunch expects a record dlaunch wrote"), std::string::npos)
      << error;
  EXPECT_NE(error.find("Remove it"), std::string::npos) << error;
}

TEST(ReadOutsideFile, ADeviceIsRefusedEvenThroughALinkTheUserMayMake) {
  test_support::TempDir dir;
  const std::string path = dir.path() + "/zero";
  ASSERT_EQ(::symlink("/dev/zero", path.c_str()), 0);
  std::string error = test_support::input_error_of([&] { (void)read_outside_file(path, kUserFile); });
  EXPECT_NE(error.find("is a character device"), std::string::npos) << error;
}

TEST(ReadOutsideFile, ALinkWhereDlaunchWroteTheFileIsRefused) {
  test_support::TempDir dir;
  write(dir.path() + "/target", "secret");
  const std::string path = dir.path() + "/link";
  ASSERT_EQ(::symlink((dir.path() + "/target").c_str(), path.c_str()), 0);
  std::string error = test_support::input_error_of([&] { (void)read_outside_file(path, kRecord); });
  EXPECT_NE(error.find(path + " is a symbolic link"), std::string::npos) << error;
  EXPECT_EQ(read_outside_file(path, kUserFile), "secret");  // a path the user named: followed
}

TEST(ReadOutsideFile, AFolderIsRefused) {
  test_support::TempDir dir;
  std::string error = test_support::input_error_of([&] { (void)read_outside_file(dir.path(), kUserFile); });
  EXPECT_NE(error.find("is a directory"), std::string::npos) << error;
}

TEST(ReadOutsideFile, AFileOverTheCapIsRefusedNamingTheCap) {
  test_support::TempDir dir;
  write(dir.path() + "/big", std::string(1025, '['));
  write(dir.path() + "/full", std::string(1024, '['));
  std::string error = test_support::input_error_of([&] { (void)read_outside_file(dir.path() + "/big", kRecord); });
  EXPECT_NE(error.find("is larger than 1 KiB, more than a record dlaunch wrote ever is"), std::string::npos)
      << error;
  EXPECT_EQ(read_outside_file(dir.path() + "/full", kRecord)->size(), 1024u);
}

TEST(ReadOutsideFile, AProcFileThatSaysSizeZeroIsStillCapped) {
  // /proc reports size 0 for a file of any length: the cap holds while reading.
  std::string error = test_support::input_error_of(
      [&] { (void)read_outside_file("/proc/self/maps", {"a small file", 16, Links::kFollow}); });
  EXPECT_NE(error.find("is larger than 16 bytes"), std::string::npos) << error;
}

TEST(ReadOutsideFileStart, ALongerFileIsCutAtTheCapNotRefused) {
  test_support::TempDir dir;
  write(dir.path() + "/dump", std::string(1000, 'a') + std::string(100'000, 'b'));
  std::string start = read_outside_file_start(dir.path() + "/dump", kRecord);
  EXPECT_EQ(start.size(), 1024u);
  EXPECT_EQ(start.substr(0, 1000), std::string(1000, 'a'));
  write(dir.path() + "/short", "all of it\n");
  EXPECT_EQ(read_outside_file_start(dir.path() + "/short", kRecord), "all of it\n");
  EXPECT_EQ(read_outside_file_start(dir.path() + "/missing", kRecord), "");
}

TEST(ReadOutsideFileStart, AFifoOrAPlantedLinkIsStillRefused) {
  test_support::TempDir dir;
  const std::string fifo = dir.path() + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_NE(test_support::input_error_of([&] { (void)read_outside_file_start(fifo, kRecord); }).find("is a FIFO"),
            std::string::npos);
  write(dir.path() + "/target", "secret");
  const std::string link = dir.path() + "/link";
  ASSERT_EQ(::symlink((dir.path() + "/target").c_str(), link.c_str()), 0);
  EXPECT_NE(test_support::input_error_of([&] { (void)read_outside_file_start(link, kRecord); })
                .find("is a symbolic link"),
            std::string::npos);
}

TEST(OpenOutsideFile, GivesARegularFilesDescriptorAndRefusesTheRest) {
  test_support::TempDir dir;
  write(dir.path() + "/log", "line\n");
  Fd file = open_outside_file(dir.path() + "/log", kRecord);
  ASSERT_TRUE(file.valid());
  char buffer[8];
  EXPECT_EQ(::read(file.get(), buffer, sizeof(buffer)), 5);
  EXPECT_FALSE(open_outside_file(dir.path() + "/missing", kRecord).valid());
  const std::string fifo = dir.path() + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_NE(test_support::input_error_of([&] { (void)open_outside_file(fifo, kRecord); }).find("is a FIFO"),
            std::string::npos);
}

}  // namespace
}  // namespace dlaunch::util
