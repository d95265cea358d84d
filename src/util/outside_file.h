// Reading a file that someone other than this process may have put in
// place: a worker's error file, a submission folder's records, a log
// folder's results and time indexes. Such a path may hold a FIFO (a
// blocking open() waits for a writer forever, deaf to SIGTERM), a device
// (/dev/zero never ends), a symbolic link to anything, or gigabytes. Every
// such read goes through here, which refuses all of that:
//   - open(O_NONBLOCK): a FIFO or a device opens at once and never blocks;
//   - fstat on the open descriptor: only a regular file is read, with no
//     race between a check by name and the open;
//   - O_NOFOLLOW where dlaunch itself wrote the file (Links::kRefuse): a
//     link there was planted; a path the user typed may be a link
//     (Links::kFollow);
//   - a size cap, checked before reading and while reading (a file may
//     grow between the two, and /proc reports size 0).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "util/fd.h"

namespace dlaunch::util {

enum class Links {
  kRefuse,  // dlaunch wrote the file: a symbolic link there was put by someone else
  kFollow,  // the user named the path: a link is theirs to make
};

// What the caller expects at a path, for the checks and their messages.
struct OutsideFile {
  std::string_view expected;  // "the job id dlaunch submit wrote", "a worker's error file"
  std::size_t max_bytes = 1 << 20;
  Links links = Links::kRefuse;
};

// The whole of the regular file at PATH; nullopt when there is none
// (ENOENT, or a folder on the way missing). Throws InputError naming PATH,
// what is there instead and what EXPECT expected when it is not a regular
// file, is a refused link or is larger than EXPECT.max_bytes; SystemError
// when it cannot be opened or read (no permission, I/O error).
std::optional<std::string> read_outside_file(const std::string& path, const OutsideFile& expect);

// The first EXPECT.max_bytes of the regular file at PATH: a longer one is
// cut, not refused (a tool's output whose start is worth reading). "" when
// there is none. Throws as read_outside_file does otherwise.
std::string read_outside_file_start(const std::string& path, const OutsideFile& expect);

// The same checks, for a file read as a stream (a worker's log of any
// size: EXPECT.max_bytes is not applied): its descriptor, non-blocking,
// positioned at its start; an invalid Fd when there is none. Throws as
// read_outside_file does.
Fd open_outside_file(const std::string& path, const OutsideFile& expect);

// "a FIFO", "a directory", "a character device", ...: what MODE (st_mode)
// is, for messages.
std::string_view file_kind(unsigned mode);

}  // namespace dlaunch::util
