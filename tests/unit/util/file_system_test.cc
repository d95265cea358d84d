// The kinds of file system statfs names, and which machines share them.
#include "util/file_system.h"

#include <gtest/gtest.h>

namespace dlaunch::util {
namespace {

TEST(FileSystem, NetworkFileSystemsAreShared) {
  for (std::uint64_t magic : {0x6969ULL, 0x0BD00BD0ULL, 0x47504653ULL, 0x19830326ULL, 0x00C36400ULL, 0x01021997ULL})
    EXPECT_EQ(file_system_type(magic).reach, FileSystemReach::kShared) << std::hex << magic;
  EXPECT_EQ(file_system_type(0x6969).name, "nfs");
  EXPECT_EQ(file_system_type(0x0BD00BD0).name, "lustre");
}

TEST(FileSystem, DisksAreLocalAndTmpfsIsMemory) {
  EXPECT_EQ(file_system_type(0xEF53).reach, FileSystemReach::kLocal);
  EXPECT_EQ(file_system_type(0x58465342).name, "xfs");
  EXPECT_EQ(file_system_type(0x794C7630).reach, FileSystemReach::kLocal);  // overlay
  EXPECT_EQ(file_system_type(0x01021994).reach, FileSystemReach::kMemory);
  EXPECT_EQ(file_system_type(0x01021994).name, "tmpfs");
}

TEST(FileSystem, OnlyTheLow32BitsCountAsASignedFTypeWouldGiveThem) {
  // CIFS's magic has the top bit set: a signed 32-bit f_type sign-extends it.
  EXPECT_EQ(file_system_type(0xFFFFFFFFFF534D42ULL).name, "cifs");
  EXPECT_EQ(file_system_type(0xFFFFFFFFFF534D42ULL).reach, FileSystemReach::kShared);
}

TEST(FileSystem, FuseAndUnknownTypesCannotBeTold) {
  EXPECT_EQ(file_system_type(0x65735546).reach, FileSystemReach::kUnknown);
  FileSystemType unknown = file_system_type(0x12345678);
  EXPECT_EQ(unknown.reach, FileSystemReach::kUnknown);
  EXPECT_EQ(unknown.name, "0x12345678");
}

TEST(FileSystem, ReadsThisMachinesAndNothingOfAMissingPath) {
  EXPECT_TRUE(file_system_of("/").has_value());
  EXPECT_EQ(file_system_of("/proc/self")->name, "0x00009fa0");  // procfs: in no table of ours
  EXPECT_FALSE(file_system_of("/no/such/path/at/all").has_value());
}

}  // namespace
}  // namespace dlaunch::util
