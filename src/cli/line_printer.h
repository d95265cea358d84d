// What `dlaunch logs` prints of the merged lines (jobs/log_merge.h): the
// lines --grep keeps, under "[rankR]:" prefixes when several ranks show;
// with --tail only the last N of what is there now (then everything new,
// when following). With --json each line is one JSON object on a line of
// its own, for scripts: {"rank": 3, "stream": "stdout", "time_ms":
// 1733390000123 (when it arrived; null without a time index), "line":
// "..."} (bytes that are not UTF-8 become U+FFFD).
//
// When following, the start of a line whose newline has not come (a
// progress bar redrawn with '\r') is shown live, as the launcher's console
// shows it (process/stream_relay.h): what a terminal would end up showing
// of it (its text after the last '\r'), under the prefix; grown, it is
// continued; changed, it is redrawn ('\r', the prefix, the new text, spaces
// over what is left of the old); any other line first ends it with '\n',
// and its next drawing starts on a line of its own; its newline completes
// it instead of printing it again.
#pragma once

#include <cstdint>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <regex.h>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "jobs/log_merge.h"

namespace dlaunch::cli {

// A POSIX regular expression: glibc's matcher needs no recursion, so a long
// line from a worker cannot overflow the stack as std::regex's can.
class LineFilter {
 public:
  explicit LineFilter(const std::string& pattern);
  ~LineFilter();
  LineFilter(const LineFilter&) = delete;
  LineFilter& operator=(const LineFilter&) = delete;

  bool active() const { return active_; }
  bool keeps(const std::string& line) const;

 private:
  bool active_;
  regex_t regex_{};
};

// How each line is printed: as the worker wrote it (with its prefix), or
// as a JSON object.
enum class LineFormat { kText, kJsonLines };

class LinePrinter {
 public:
  // PATTERN: --grep ("" keeps all); TAIL: --tail (-1: all); OUT: where to print.
  LinePrinter(const std::string& pattern, int tail, std::FILE* out = stdout);

  void set_prefixed(bool prefixed) { prefixed_ = prefixed; }
  void set_format(LineFormat format) { format_ = format; }
  // A whole line, as it is in the file; when its start is drawn
  // (show_partial()), that drawing is completed instead.
  void print(const jobs::MergedLine& line);
  // Prints what --tail kept; from now on every line goes out at once.
  void flush_tail();
  // Hands what was printed on (a follower's lines must not wait in stdio's buffer).
  void flush() { std::fflush(out_); }

  // Whether show_partial() shows anything: not under --grep, whose filter
  // needs the whole line, nor while --tail still keeps lines back, nor as
  // JSON, whose objects are whole lines.
  bool shows_partials() const { return !filter_.active() && tail_ < 0 && format_ == LineFormat::kText; }
  // Shows HELD, the start of a line of RANK's STREAM whose newline has not
  // come yet, as it stands now.
  void show_partial(int rank, int stream, std::string_view held);

 private:
  using Source = std::pair<int, int>;  // rank, stream

  std::string prefix_of(int rank) const;
  std::string formatted(const jobs::MergedLine& line) const;
  void write(std::string_view text);
  void end_open_line();
  void complete_drawn_line(const Source& source, std::string_view text);

  LineFilter filter_;
  int tail_;
  std::FILE* out_;
  bool prefixed_ = false;
  LineFormat format_ = LineFormat::kText;
  std::deque<std::string> kept_;
  // Sources whose line's start is drawn, with what it shows (after the
  // prefix), until its newline comes; the one whose drawing the cursor
  // still ends, if any.
  std::map<Source, std::string> drawn_;
  std::optional<Source> on_screen_;
};

// Shows, when following, the start of each line that has waited for its
// newline since the previous look at least (a poll, 250 ms), so a progress
// bar redrawn with '\r' shows live, while a line written in two pieces (its
// text, then '\n') is not cut: the launcher's console waits 100 ms alike
// (process/stream_relay.h). Under --grep nothing partial shows: the filter
// needs the whole line (LinePrinter::shows_partials()).
class WaitingLines {
 public:
  using Sources = std::vector<std::unique_ptr<jobs::LogLineSource>>;

  // Call after each merge_available() of SOURCES.
  void show(const Sources& sources, LinePrinter& printer);
  // New sources (a restart's files): what was held refers to the old ones.
  void forget() { held_at_.clear(); }

 private:
  // Per source, where the line it held at the last look starts.
  std::vector<std::optional<std::uint64_t>> held_at_;
};

}  // namespace dlaunch::cli
