#include "process/stream_relay.h"

#include <cstring>

namespace dlaunch::process {
namespace {
constexpr std::size_t kTailKeep = 8 * 1024;
}

void OutputTail::append(std::string_view bytes) {
  if (bytes.size() >= kTailKeep) {
    bytes_.assign(bytes.substr(bytes.size() - kTailKeep));
    return;
  }
  bytes_.append(bytes);
  if (bytes_.size() > 2 * kTailKeep) bytes_.erase(0, bytes_.size() - kTailKeep);
}

std::vector<std::string> OutputTail::last_lines(std::size_t count) const {
  std::vector<std::string> lines;
  std::string_view rest(bytes_);
  if (!rest.empty() && rest.back() == '\n') rest.remove_suffix(1);
  while (!rest.empty() && lines.size() < count) {
    std::size_t newline = rest.rfind('\n');
    std::size_t start = newline == std::string_view::npos ? 0 : newline + 1;
    lines.emplace(lines.begin(), rest.substr(start));
    if (newline == std::string_view::npos) break;
    rest = rest.substr(0, newline);
  }
  return lines;
}

StreamRelay::StreamRelay(std::string prefix, Outputs outputs)
    : prefix_(std::move(prefix)),
      console_(outputs.console),
      shown_(outputs.shown && outputs.console != nullptr),
      file_(std::move(outputs.file)),
      times_(std::move(outputs.times)),
      tail_(outputs.tail),
      on_file_fault_(std::move(outputs.on_file_fault)),
      on_bytes_(std::move(outputs.on_bytes)) {
  if (outputs.file_error != 0) fail_file(LogFileFault{outputs.file_error, false, 0, 0});
}

void StreamRelay::feed(std::string_view chunk) {
  if (on_bytes_) on_bytes_(chunk);
  std::string_view for_console = chunk;
  if (file_) for_console = write_file(chunk);
  else if (fault_) fault_->lost_bytes += chunk.size();
  if (tail_ != nullptr) tail_->append(chunk);
  // A hidden stream with a file still follows its lines, so that it can
  // start on a line's first byte should the file fail.
  if (shown_ || (file_ && console_ != nullptr)) cut_lines(for_console);
}

// Files CHUNK; returns what of it the console is to see (all of it, unless
// the file failed just now in a stream the console did not show so far).
std::string_view StreamRelay::write_file(std::string_view chunk) {
  times_.note(filed_bytes_);
  util::WriteResult result = util::write_now(file_.get(), chunk);
  filed_bytes_ += result.written;
  if (result.error == 0) return chunk;
  bool was_shown = shown_;
  fail_file(LogFileFault{result.error, true, filed_bytes_, chunk.size() - result.written});
  if (was_shown) return chunk;
  // From the start of the line holding the first byte the file missed; when
  // that line began in an earlier chunk, its start is in partial_.
  std::size_t newline = chunk.substr(0, result.written).rfind('\n');
  if (newline == std::string_view::npos) return chunk;
  partial_.clear();
  return chunk.substr(newline + 1);
}

// No hole in the middle of a log: after the first failure the file gets
// nothing more, and the console gets everything.
void StreamRelay::fail_file(LogFileFault fault) {
  fault_ = fault;
  file_.reset();
  if (console_ != nullptr) shown_ = true;
  if (on_file_fault_) on_file_fault_(*fault_);
}

void StreamRelay::cut_lines(std::string_view chunk) {
  std::size_t last_newline = chunk.rfind('\n');
  if (last_newline == std::string_view::npos) {
    partial_.append(chunk);
    if (partial_.size() >= kMaxHeldLine) {
      if (shown_) {
        partial_.push_back('\n');
        show(partial_);
      }
      partial_.clear();
    }
    return;
  }
  std::string_view lines = chunk.substr(0, last_newline + 1);
  if (shown_ && partial_.empty()) {
    show(lines);
  } else if (shown_) {
    partial_.append(lines);
    show(partial_);
  }
  partial_.assign(chunk.substr(last_newline + 1));
}

void StreamRelay::finish() {
  if (shown_ && !partial_.empty()) {
    partial_.push_back('\n');
    show(partial_);
  }
  partial_.clear();
}

// Writes WHOLE_LINES (each ending in '\n') with the prefix before each line.
void StreamRelay::show(std::string_view whole_lines) {
  // One batch buffer for every relay: the launcher relays from one thread,
  // and a buffer per stream would multiply its peak memory by the workers.
  thread_local std::string batch;
  batch.clear();
  // Short lines are the common case; guess generously to avoid regrowth.
  batch.reserve(whole_lines.size() + prefix_.size() * (whole_lines.size() / 16 + 1));
  const char* cursor = whole_lines.data();
  const char* end = cursor + whole_lines.size();
  while (cursor < end) {
    const char* newline =
        static_cast<const char*>(std::memchr(cursor, '\n', static_cast<std::size_t>(end - cursor)));
    batch.append(prefix_);
    batch.append(cursor, static_cast<std::size_t>(newline - cursor) + 1);
    cursor = newline + 1;
  }
  // One write per batch when the console takes it; whole lines dropped and
  // counted when it is stalled.
  console_->write_lines(batch, file_.valid());
}

}  // namespace dlaunch::process
