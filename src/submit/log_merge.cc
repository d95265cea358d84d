#include "submit/log_merge.h"

#include <fcntl.h>
#include <queue>
#include <unistd.h>

#include "process/time_index.h"
#include "util/strings.h"

namespace dlaunch::submit {
namespace {

constexpr std::size_t kReadBytes = 64 * 1024;

util::Fd open_reading(const std::string& path) {
  // O_NONBLOCK: a FIFO planted where a log belongs must not hang the reader.
  return util::Fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
}

// Appends what FD has now (at most kReadBytes) to BUFFER; false at its end.
bool read_some(int fd, std::string& buffer) {
  char chunk[kReadBytes];
  ssize_t got = util::read_retrying(fd, chunk, sizeof(chunk));
  if (got <= 0) return false;
  buffer.append(chunk, static_cast<std::size_t>(got));
  return true;
}

}  // namespace

LogLineSource::LogLineSource(int rank, int stream, std::string log_path)
    : rank_(rank), stream_(stream), path_(std::move(log_path)) {
  file_ = open_reading(path_);
  index_ = open_reading(process::time_index_path(path_));
}

// The time of the byte at OFFSET: that of the last mark at or before it.
// Marks and lines both go forward, so the index is read once, in step.
std::int64_t LogLineSource::time_at(std::uint64_t offset) {
  for (;;) {
    if (next_mark_offset_ != UINT64_MAX) {
      if (next_mark_offset_ > offset) return current_ms_;
      current_ms_ = next_mark_ms_;
      next_mark_offset_ = UINT64_MAX;
    }
    std::size_t newline = index_buffer_.find('\n');
    while (newline == std::string::npos && index_ && read_some(index_.get(), index_buffer_))
      newline = index_buffer_.find('\n');
    if (newline == std::string::npos) return current_ms_;
    auto fields = util::split(index_buffer_.substr(0, newline), ' ');
    index_buffer_.erase(0, newline + 1);
    if (fields.size() != 2) continue;  // a line cut short: the next one is whole
    auto mark_offset = util::parse_int(fields[0]);
    auto mark_ms = util::parse_int(fields[1]);
    if (!mark_offset || !mark_ms || *mark_offset < 0) continue;
    next_mark_offset_ = static_cast<std::uint64_t>(*mark_offset);
    next_mark_ms_ = *mark_ms;
  }
}

bool LogLineSource::fill() { return file_ && read_some(file_.get(), buffer_); }

bool LogLineSource::next(MergedLine& line) {
  std::size_t newline = buffer_.find('\n');
  while (newline == std::string::npos && buffer_.size() < kMaxLineBytes && fill()) newline = buffer_.find('\n');
  std::size_t length;
  std::size_t consumed;
  if (newline != std::string::npos && newline <= kMaxLineBytes) {
    length = newline;
    consumed = newline + 1;
  } else if (buffer_.size() >= kMaxLineBytes) {
    length = consumed = kMaxLineBytes;  // a piece of an overlong line
  } else if (finished_ && !buffer_.empty()) {
    length = consumed = buffer_.size();
  } else {
    return false;
  }
  line.rank = rank_;
  line.stream = stream_;
  line.unix_ms = time_at(buffer_offset_);
  line.text.assign(buffer_, 0, length);
  buffer_.erase(0, consumed);
  buffer_offset_ += consumed;
  return true;
}

std::optional<std::string_view> LogLineSource::held_part() const {
  // After next() returned false the buffer holds no newline and less than
  // kMaxLineBytes: all of it is the start of one line.
  if (finished_ || buffer_.empty() || buffer_.find('\n') != std::string::npos) return std::nullopt;
  return std::string_view(buffer_);
}

std::size_t merge_available(std::vector<std::unique_ptr<LogLineSource>>& sources,
                            const std::function<void(const MergedLine&)>& emit) {
  struct Head {
    MergedLine line;
    std::size_t source;
  };
  auto later = [](const Head& a, const Head& b) {
    if (a.line.unix_ms != b.line.unix_ms) return a.line.unix_ms > b.line.unix_ms;
    if (a.line.rank != b.line.rank) return a.line.rank > b.line.rank;
    return a.line.stream > b.line.stream;
  };
  std::priority_queue<Head, std::vector<Head>, decltype(later)> heads(later);
  for (std::size_t i = 0; i < sources.size(); ++i) {
    Head head{{}, i};
    if (sources[i]->next(head.line)) heads.push(std::move(head));
  }
  std::size_t emitted = 0;
  while (!heads.empty()) {
    Head head = heads.top();
    heads.pop();
    emit(head.line);
    ++emitted;
    if (sources[head.source]->next(head.line)) heads.push(std::move(head));
  }
  return emitted;
}

}  // namespace dlaunch::submit
