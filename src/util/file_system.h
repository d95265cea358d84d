// Which kind of file system a path lives on (statfs's f_type), so dlaunch
// can tell a file every machine of a cluster sees (NFS, Lustre, GPFS, ...)
// from one only this machine has (its disk, its memory).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace dlaunch::util {

// Who else is likely to see a file on a file system of this kind.
enum class FileSystemReach {
  kShared,   // a network or cluster file system: NFS, Lustre, GPFS, BeeGFS, CephFS, 9p, SMB, ...
  kLocal,    // a disk of this machine: ext4, xfs, btrfs, zfs, overlay, squashfs, ...
  kMemory,   // this machine's memory: tmpfs, ramfs (never shared)
  kUnknown,  // FUSE and any type not in the table: it may be either
};

struct FileSystemType {
  std::string name;  // "nfs", "lustre", "ext4", ...; "0x1234abcd" for a type not in the table
  FileSystemReach reach = FileSystemReach::kUnknown;
};

// The file system statfs(2) names by MAGIC (its f_type). Pure.
FileSystemType file_system_type(std::uint64_t magic);

// The file system PATH lives on; nullopt when statfs fails (no such path,
// no permission), since callers only warn by it.
std::optional<FileSystemType> file_system_of(const std::string& path);

}  // namespace dlaunch::util
