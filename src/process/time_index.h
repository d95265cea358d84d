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
#pragma once

#include <cstdint>
#include <string>

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

// "DIR/stdout.times" for "DIR/stdout.log": where a log's index lives.
std::string time_index_path(const std::string& log_path);

}  // namespace dlaunch::process
