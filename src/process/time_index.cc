#include "process/time_index.h"

#include <chrono>
#include <fmt/format.h>

#include "util/strings.h"

namespace dlaunch::process {

void TimeIndex::note(std::uint64_t offset, std::int64_t unix_ms) {
  if (!file_) return;
  if (last_mark_ms_ >= 0 && unix_ms - last_mark_ms_ < kMarkIntervalMs && unix_ms >= last_mark_ms_) return;
  last_mark_ms_ = unix_ms;
  std::string line = fmt::format("{} {}\n", offset, unix_ms);
  util::WriteResult result = util::write_now(file_.get(), line);
  // A half-written line would mislead the reader; the index ends here instead.
  if (result.error != 0 || result.written != line.size()) file_.reset();
}

void TimeIndex::note(std::uint64_t offset) {
  auto now = std::chrono::system_clock::now().time_since_epoch();
  note(offset, std::chrono::duration_cast<std::chrono::milliseconds>(now).count());
}

std::optional<TimeMark> parse_time_mark(std::string_view line) {
  // As TimeMarks drops a longer line fed in pieces, it is no mark whole either.
  if (line.size() > TimeMarks::kMaxLineBytes) return std::nullopt;
  const std::size_t space = line.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  auto offset = util::parse_int(line.substr(0, space));
  auto unix_ms = util::parse_int(line.substr(space + 1));
  if (!offset || !unix_ms || *offset < 0) return std::nullopt;
  return TimeMark{static_cast<std::uint64_t>(*offset), *unix_ms};
}

void TimeMarks::feed(std::string_view bytes) {
  if (skipping_) {
    const std::size_t newline = bytes.find('\n');
    junk_bytes_ += newline == std::string_view::npos ? bytes.size() : newline + 1;
    if (newline == std::string_view::npos) return;
    bytes.remove_prefix(newline + 1);
    skipping_ = false;
  }
  buffer_.erase(0, start_);  // what next() has read
  start_ = 0;
  buffer_.append(bytes);
  drop_unended_line();
}

// A tail without a newline longer than any mark: dropped now, and the
// rest of it as it comes, so garbage without newlines takes no memory.
void TimeMarks::drop_unended_line() {
  const std::size_t last_newline = buffer_.rfind('\n');
  const std::size_t tail_start = last_newline == std::string::npos ? 0 : last_newline + 1;
  if (buffer_.size() - tail_start <= kMaxLineBytes) return;
  junk_bytes_ += buffer_.size() - tail_start;
  buffer_.resize(tail_start);
  skipping_ = true;
}

std::optional<TimeMark> TimeMarks::next() {
  for (;;) {
    const std::size_t newline = buffer_.find('\n', start_);
    if (newline == std::string::npos) return std::nullopt;
    std::string_view line(buffer_.data() + start_, newline - start_);
    start_ = newline + 1;
    // A line cut short or garbage: skipped, the next one may be whole.
    if (auto mark = parse_time_mark(line)) {
      junk_bytes_ = 0;
      return mark;
    }
    junk_bytes_ += line.size() + 1;
  }
}

std::string time_index_path(const std::string& log_path) {
  std::string base = log_path.ends_with(".log") ? log_path.substr(0, log_path.size() - 4) : log_path;
  return base + ".times";
}

}  // namespace dlaunch::process
