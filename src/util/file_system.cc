#include "util/file_system.h"

#include <array>
#include <fmt/format.h>
#include <sys/vfs.h>

namespace dlaunch::util {
namespace {

struct KnownType {
  std::uint32_t magic;
  const char* name;
  FileSystemReach reach;
};

// The magic numbers of linux/magic.h and of the file systems' own sources
// (Lustre, GPFS, BeeGFS, PanFS keep theirs out of the kernel). Only the low
// 32 bits count: f_type is a signed long, and some magics have the top bit.
constexpr std::array<KnownType, 24> kKnownTypes = {{
    {0x6969, "nfs", FileSystemReach::kShared},
    {0x0BD00BD0, "lustre", FileSystemReach::kShared},
    {0x47504653, "gpfs", FileSystemReach::kShared},
    {0x19830326, "beegfs", FileSystemReach::kShared},
    {0x00C36400, "cephfs", FileSystemReach::kShared},
    {0x01021997, "9p", FileSystemReach::kShared},
    {0x517B, "smb", FileSystemReach::kShared},
    {0xFF534D42, "cifs", FileSystemReach::kShared},
    {0xFE534D42, "smb2", FileSystemReach::kShared},
    {0x5346414F, "afs", FileSystemReach::kShared},
    {0x7461636F, "ocfs2", FileSystemReach::kShared},
    {0x01161970, "gfs2", FileSystemReach::kShared},
    {0xAAD7AAEA, "panfs", FileSystemReach::kShared},
    {0xEF53, "ext4", FileSystemReach::kLocal},  // ext2 and ext3 share it
    {0x58465342, "xfs", FileSystemReach::kLocal},
    {0x9123683E, "btrfs", FileSystemReach::kLocal},
    {0x2FC12FC1, "zfs", FileSystemReach::kLocal},
    {0xF2F52010, "f2fs", FileSystemReach::kLocal},
    {0x794C7630, "overlay", FileSystemReach::kLocal},
    {0x73717368, "squashfs", FileSystemReach::kLocal},
    {0x4D44, "vfat", FileSystemReach::kLocal},
    {0x01021994, "tmpfs", FileSystemReach::kMemory},
    {0x858458F6, "ramfs", FileSystemReach::kMemory},
    {0x65735546, "fuse", FileSystemReach::kUnknown},  // sshfs, a cloud bucket, a cluster FS: no telling
}};

}  // namespace

FileSystemType file_system_type(std::uint64_t magic) {
  const auto low = static_cast<std::uint32_t>(magic);
  for (const KnownType& known : kKnownTypes) {
    if (known.magic == low) return {known.name, known.reach};
  }
  return {fmt::format("0x{:08x}", low), FileSystemReach::kUnknown};
}

std::optional<FileSystemType> file_system_of(const std::string& path) {
  struct statfs info {};
  if (::statfs(path.c_str(), &info) != 0) return std::nullopt;
  return file_system_type(static_cast<std::uint64_t>(info.f_type));
}

}  // namespace dlaunch::util
