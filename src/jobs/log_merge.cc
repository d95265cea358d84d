#include "jobs/log_merge.h"

#include <queue>
#include <unistd.h>

#include "util/outside_file.h"

namespace dlaunch::jobs {
namespace {

constexpr std::size_t kReadBytes = 64 * 1024;

// PATH when it is a regular file; else nothing, as when it is missing: a
// FIFO planted where a log belongs must not hang the reader, nor a link to
// /dev/zero feed it forever. The logs are dlaunch's own: a link there was
// planted too.
util::Fd open_reading(const std::string& path, std::string_view expected) {
  try {
    return util::open_outside_file(path, {expected, 0, util::Links::kRefuse});
  } catch (const std::exception&) {
    return util::Fd();
  }
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
  file_ = open_reading(path_, "a worker's log");
  index_ = open_reading(process::time_index_path(path_), "a log's time index");
}

// The time of the byte at OFFSET: that of the last mark at or before it.
// Marks and lines both go forward, so the index is read once, in step.
std::int64_t LogLineSource::time_at(std::uint64_t offset) {
  for (;;) {
    if (next_mark_) {
      if (next_mark_->offset > offset) return current_ms_;
      current_ms_ = next_mark_->unix_ms;
      next_mark_.reset();
    }
    next_mark_ = marks_.next();
    while (!next_mark_ && index_ && read_index()) next_mark_ = marks_.next();
    if (!next_mark_) return current_ms_;
  }
}

// Feeds the next piece of the index to the marks; false at its end, or
// when it turned out to be no index (then it is read no further).
bool LogLineSource::read_index() {
  std::string chunk;
  if (!read_some(index_.get(), chunk)) return false;
  marks_.feed(chunk);
  if (marks_.given_up()) index_.reset();
  return true;
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

}  // namespace dlaunch::jobs
