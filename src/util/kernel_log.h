// The kernel's log from a point on: what the kernel said about this host's
// hardware (an NVIDIA driver's "NVRM: Xid" lines) or its OOM killer since a
// launcher started, read between rounds.
//
// /dev/kmsg gives one record per read(2) and keeps a reader's place, so a
// reader opened at the end sees exactly what came later, and EPIPE says the
// ring buffer overwrote records it had not read yet. It is refused to users
// where kernel.dmesg_restrict is 1 (most distributions): then error() says
// so and nothing is read. Written by hand because no library in Debian
// reads /dev/kmsg (util-linux's dmesg has no library interface).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "util/fd.h"

namespace dlaunch::util {

// The message of one /dev/kmsg record "PRIORITY,SEQUENCE,MICROSECONDS,FLAGS;
// MESSAGE\n KEY=VALUE...": MESSAGE. A line without the ";" header (a plain
// log file given instead) is its own message. Pure.
std::string kernel_message(std::string_view record);

class KernelLog {
 public:
  // Opens PATH (non-blocking) at its end: only records written later are read.
  explicit KernelLog(std::string path = "/dev/kmsg");

  // The messages written since the last call (or the opening), at most
  // MAX_MESSAGES of them (the rest stay for the next call). Empty when the
  // log could not be opened.
  std::vector<std::string> read_new(std::size_t max_messages = 4096);

  // Why the log cannot be read ("/dev/kmsg: Permission denied"); empty when it can.
  const std::string& error() const { return error_; }
  // Records the ring buffer overwrote before they were read.
  bool lost_records() const { return lost_records_; }

 private:
  std::string path_;
  Fd fd_;
  std::string error_;
  bool lost_records_ = false;
  std::string partial_;  // a plain file's unfinished last line
};

}  // namespace dlaunch::util
