// When a worker log's bytes arrived: a side file beside the log
// ("stdout.times" for "stdout.log") that lets `dlaunch logs` merge the
// ranks' files in time order, although the files hold the workers' bytes
// unchanged.
//
// Each line is "OFFSET UNIX_MS": the bytes from OFFSET on arrived at
// UNIX_MS or later. A line is written only when a chunk arrives at least
// kMarkInterval after the last line, so lines of different ranks merge in
// the right order when they are that far apart, and the index grows by at
// most ten short lines a second however much the worker writes (a worker
// that writes without pause gets about 15 MB a day, a small part of its
// log), and not at all while it is quiet. Writes never block (a full disk
// or a FIFO planted there only ends the index, never the worker's output);
// the log itself is what must not be lost, the index only orders it.
//
// TimeMarks reads an index back (`dlaunch logs`). The file may be anything
// by then (a shared folder, a copied or damaged one): lines that are not
// marks are skipped, a "line" that never ends is dropped as it comes, and
// an index that yields no mark for kMaxJunkBytes is given up, so reading it
// takes bounded memory and ends.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "util/fd.h"

namespace dlaunch::process {

class TimeIndex {
 public:
  static constexpr std::int64_t kMarkIntervalMs = 100;

  TimeIndex() = default;
  explicit TimeIndex(util::Fd file) : file_(std::move(file)) {}

  // Bytes from OFFSET on arrive now (UNIX_MS: the wall clock, in ms).
  void note(std::uint64_t offset, std::int64_t unix_ms);
  // note() with the wall clock.
  void note(std::uint64_t offset);

  bool active() const { return file_.valid(); }

 private:
  util::Fd file_;
  std::int64_t last_mark_ms_ = -1;
};

// One line of an index: the bytes from OFFSET on arrived at UNIX_MS or later.
struct TimeMark {
  std::uint64_t offset = 0;
  std::int64_t unix_ms = 0;
};

// "OFFSET UNIX_MS" as a mark; nullopt for anything else.
std::optional<TimeMark> parse_time_mark(std::string_view line);

// An index's marks from its bytes, fed in chunks as they are read.
class TimeMarks {
 public:
  // A mark line is about 25 bytes; one this long is not one.
  static constexpr std::size_t kMaxLineBytes = 64;
  // This many bytes without a mark: the file is not an index.
  static constexpr std::size_t kMaxJunkBytes = 1 << 20;

  // The next BYTES of the file. Holds at most what was fed since next()
  // last found nothing, plus kMaxLineBytes.
  void feed(std::string_view bytes);
  // The next whole mark fed; nullopt until more is fed.
  std::optional<TimeMark> next();
  // Whether the bytes are not an index: stop reading them.
  bool given_up() const { return junk_bytes_ > kMaxJunkBytes; }

 private:
  void drop_unended_line();

  std::string buffer_;
  std::size_t start_ = 0;     // buffer_ before it has been read
  bool skipping_ = false;     // in an overlong line, until its newline
  std::size_t junk_bytes_ = 0;  // since the last mark
};

// "DIR/stdout.times" for "DIR/stdout.log": where a log's index lives.
std::string time_index_path(const std::string& log_path);

}  // namespace dlaunch::process
