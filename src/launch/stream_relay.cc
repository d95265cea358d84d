#include "launch/stream_relay.h"

#include <cstring>

namespace dlaunch {
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

StreamRelay::StreamRelay(std::string prefix, int console_fd, Fd file, OutputTail* tail)
    : prefix_(std::move(prefix)), console_fd_(console_fd), file_(std::move(file)), tail_(tail) {}

void StreamRelay::feed(std::string_view chunk) {
  if (file_) write_all(file_.get(), chunk);
  if (tail_ != nullptr) tail_->append(chunk);
  if (console_fd_ < 0) return;

  std::size_t last_newline = chunk.rfind('\n');
  if (last_newline == std::string_view::npos) {
    partial_.append(chunk);
    if (partial_.size() >= kMaxHeldLine) {
      partial_.push_back('\n');
      show(partial_);
      partial_.clear();
    }
    return;
  }
  if (partial_.empty()) {
    show(chunk.substr(0, last_newline + 1));
  } else {
    partial_.append(chunk.substr(0, last_newline + 1));
    show(partial_);
    partial_.clear();
  }
  partial_.append(chunk.substr(last_newline + 1));
}

void StreamRelay::finish() {
  if (console_fd_ >= 0 && !partial_.empty()) {
    partial_.push_back('\n');
    show(partial_);
    partial_.clear();
  }
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
  write_all(console_fd_, batch);
}

}  // namespace dlaunch
