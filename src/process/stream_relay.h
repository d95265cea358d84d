// Relays one worker stream to the console and to its log file.
//
// Console output is cut into whole lines, each prefixed ("[rank3]:"), and
// handed to the console sink as one batch per chunk read, so lines of
// different workers never interleave mid-line, and a console nobody reads
// never stops the launcher (util/console.h: its feeder stops reading when
// it is full, or it drops whole lines and counts them). The file gets the
// worker's bytes unchanged. When the file cannot be written (a full disk),
// the relay stops writing to it, and the stream goes to the console from
// then on, even when it was meant for the file only, so no output is lost
// silently (launch/log_file_fault.h).
//
// A line whose end has not come (a progress bar redrawn with '\r', a
// prompt) is shown once it has waited kPartialDelay (show_partial(), which
// the reader's event loop calls at partial_due()): the delay keeps a line
// a worker writes in two pieces (Python's print unbuffered: the text, then
// '\n') whole. What the console shows of a line is what a terminal would
// end up showing: its text after the last '\r', under the prefix. A bar
// redrawn is redrawn under its prefix ('\r', the prefix, the new text,
// spaces over what is left of the old), a line that grows is continued,
// and one another writer interrupted starts again on a line of its own.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "process/log_file_fault.h"
#include "process/time_index.h"
#include "util/console.h"
#include "util/fd.h"

namespace dlaunch::process {

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
  struct Outputs {
    util::ConsoleSink* console = nullptr;  // null: never shown
    bool shown = true;               // false: shown only once the file fails (-r, a filtered rank)
    util::Fd file;                         // invalid: not filed (or could not be created: file_error)
    TimeIndex times;                       // when the file's bytes arrived (process/time_index.h)
    int file_error = 0;              // errno: the file could not be created
    OutputTail* tail = nullptr;
    // Called once, when the file fails (or at construction, for file_error).
    std::function<void(const LogFileFault&)> on_file_fault;
    // Every chunk read, as it came (dlaunch ssh looks for a host's verdict
    // line in its launcher's stderr); null: none.
    std::function<void(std::string_view)> on_bytes;
    // Why the file was not created, when something planted at its name was
    // refused (util/safe_file.h); with file_error.
    std::string file_refusal;
  };

  using Clock = std::chrono::steady_clock;
  // How long the start of a line waits for its end before it is shown.
  static constexpr std::chrono::milliseconds kPartialDelay{100};

  StreamRelay(std::string prefix, Outputs outputs);

  // Takes a chunk just read from the worker's pipe, at NOW.
  void feed(std::string_view chunk, Clock::time_point now = Clock::now());
  // The worker closed the stream: an unterminated last line is shown with a newline.
  void finish();

  // When the line held in part is to be shown (show_partial()); nullopt
  // when none waits: no line is held, or it is shown as it stands.
  std::optional<Clock::time_point> partial_due() const;
  // Shows the line held in part as it stands now.
  void show_partial();

  // Whether the reader should stop reading (the console is full, under
  // ConsoleOverflow::kBlock) / may read again. A stream the console does
  // not show is never held back.
  bool console_full() const;
  bool console_has_room() const;

  // Set once the file failed; lost_bytes keeps counting what it misses.
  const std::optional<LogFileFault>& file_fault() const { return fault_; }

  // A line longer than this is shown in pieces rather than held without bound.
  static constexpr std::size_t kMaxHeldLine = 1 << 20;

 private:
  std::string_view write_file(std::string_view chunk);
  void fail_file(LogFileFault fault);
  void cut_lines(std::string_view chunk, Clock::time_point now);
  void hold(std::string_view part, Clock::time_point now);
  void end_held_line(std::string_view rest_of_line);
  void show(std::string_view head, std::string_view whole_lines);
  void show_with_returns(std::string_view head, std::string_view whole_lines);

  std::string prefix_;
  util::ConsoleSink* console_;
  bool shown_;
  util::Fd file_;
  TimeIndex times_;
  OutputTail* tail_;
  std::function<void(const LogFileFault&)> on_file_fault_;
  std::function<void(std::string_view)> on_bytes_;
  std::uint64_t filed_bytes_ = 0;
  std::optional<LogFileFault> fault_;
  std::string partial_;  // the start of a line whose end has not arrived (from its last '\r' on)
  std::string on_console_;  // what the console shows of that line, after the prefix ("": nothing)
  std::optional<Clock::time_point> held_since_;  // when partial_ changed after it was last shown
};

}  // namespace dlaunch::process
