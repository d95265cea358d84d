// Relays one worker stream to the console and to its log file.
//
// Console output is cut into whole lines, each prefixed ("[rank3]:"), and
// written with one write() per batch from the launcher's single thread, so
// lines of different workers never interleave mid-line. The file gets the
// worker's bytes unchanged.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "util/fd.h"

namespace dlaunch {

// The last lines a worker wrote (both streams), for the failure summary.
class OutputTail {
 public:
  void append(std::string_view bytes);
  std::vector<std::string> last_lines(std::size_t count) const;

 private:
  std::string bytes_;  // the most recent few KiB
};

class StreamRelay {
 public:
  // CONSOLE_FD < 0: not shown. FILE invalid: not filed. TAIL may be null.
  StreamRelay(std::string prefix, int console_fd, Fd file, OutputTail* tail);

  // Takes a chunk just read from the worker's pipe.
  void feed(std::string_view chunk);
  // The worker closed the stream: an unterminated last line is shown with a newline.
  void finish();

  // A line longer than this is shown in pieces rather than held without bound.
  static constexpr std::size_t kMaxHeldLine = 1 << 20;

 private:
  void show(std::string_view whole_lines);

  std::string prefix_;
  int console_fd_;
  Fd file_;
  OutputTail* tail_;
  std::string partial_;  // the start of a line whose end has not arrived
};

}  // namespace dlaunch
