#include "process/time_index.h"

#include <chrono>
#include <fmt/format.h>

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

std::string time_index_path(const std::string& log_path) {
  std::string base = log_path.ends_with(".log") ? log_path.substr(0, log_path.size() - 4) : log_path;
  return base + ".times";
}

}  // namespace dlaunch::process
