// Merging the workers' log files of a run in time order, as `dlaunch logs`
// shows them: each file holds one worker stream's bytes unchanged, and its
// time index (process/time_index.h) says when they arrived, to a
// tenth of a second. Lines closer than that keep their files' order, rank
// by rank.
//
// Streaming: one buffer per file, so a 100 GB log merges in bounded memory.
// A line longer than kMaxLineBytes is shown in pieces of that size. Only
// regular files are read (util/outside_file.h): a FIFO or a link to
// /dev/zero planted for a log or an index is left out, as a missing file.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "process/time_index.h"
#include "util/fd.h"

namespace dlaunch::jobs {

inline constexpr std::size_t kMaxLineBytes = 64 * 1024;

struct MergedLine {
  int rank = 0;
  int stream = 1;            // 1 stdout, 2 stderr
  std::int64_t unix_ms = 0;  // when it arrived (0: the file has no time index)
  std::string text;          // without its newline
};

// One log file read line by line from where it was left, with the times
// of its index. Follows a growing file: a line without its newline yet is
// held back until it is complete (or finish() is called); held_part() lets
// a follower show its start meanwhile (a progress bar redrawn with '\r').
class LogLineSource {
 public:
  LogLineSource(int rank, int stream, std::string log_path);

  // The next complete line, if one is there now.
  bool next(MergedLine& line);
  // The file will not grow any more: an unterminated last line is a line.
  void finish() { finished_ = true; }
  int rank() const { return rank_; }
  int stream() const { return stream_; }

  // The start of a line whose newline has not come yet, as next() holds it
  // back once it has returned false; nullopt when none is held, or after
  // finish() (the rest is a line then). Valid until the next call of next().
  std::optional<std::string_view> held_part() const;
  // Where in the file the held line starts: the same offset at two looks
  // means the same line is still waiting for its end (it may have grown).
  std::uint64_t held_offset() const { return buffer_offset_; }

 private:
  bool fill();
  bool read_index();
  std::int64_t time_at(std::uint64_t offset);

  int rank_;
  int stream_;
  std::string path_;
  util::Fd file_;
  util::Fd index_;
  std::string buffer_;
  std::uint64_t buffer_offset_ = 0;  // the file offset of buffer_[0]
  process::TimeMarks marks_;
  std::int64_t current_ms_ = 0;
  std::optional<process::TimeMark> next_mark_;
  bool finished_ = false;
};

// Emits every line now available in SOURCES in time order (then rank,
// stdout before stderr, file order). Returns how many were emitted.
std::size_t merge_available(std::vector<std::unique_ptr<LogLineSource>>& sources,
                            const std::function<void(const MergedLine&)>& emit);

}  // namespace dlaunch::jobs
