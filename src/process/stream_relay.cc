#include "process/stream_relay.h"

#include <algorithm>
#include <cstring>
#include <memory>

#include "util/terminal_text.h"

namespace dlaunch::process {
namespace {
constexpr std::size_t kTailKeep = 8 * 1024;
}  // namespace

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
  if (outputs.file_error != 0) fail_file(LogFileFault{outputs.file_error, false, 0, 0, std::move(outputs.file_refusal)});
}

void StreamRelay::feed(std::string_view chunk, Clock::time_point now) {
  if (on_bytes_) on_bytes_(chunk);
  std::string_view for_console = chunk;
  if (file_) for_console = write_file(chunk);
  else if (fault_) fault_->lost_bytes += chunk.size();
  if (tail_ != nullptr) tail_->append(chunk);
  // A hidden stream with a file still follows its lines, so that it can
  // start on a line's first byte should the file fail.
  if (shown_ || (file_ && console_ != nullptr)) cut_lines(for_console, now);
}

// Files CHUNK; returns what of it the console is to see (all of it, unless
// the file failed just now in a stream the console did not show so far).
std::string_view StreamRelay::write_file(std::string_view chunk) {
  times_.note(filed_bytes_);
  util::WriteResult result = util::write_now(file_.get(), chunk);
  filed_bytes_ += result.written;
  if (result.error == 0) return chunk;
  bool was_shown = shown_;
  fail_file(LogFileFault{result.error, true, filed_bytes_, chunk.size() - result.written, ""});
  if (was_shown) return chunk;
  // From the start of the line holding the first byte the file missed; when
  // that line began in an earlier chunk, its start is in partial_.
  std::size_t newline = chunk.substr(0, result.written).rfind('\n');
  if (newline == std::string_view::npos) return chunk;
  partial_.clear();
  held_since_.reset();
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

void StreamRelay::cut_lines(std::string_view chunk, Clock::time_point now) {
  std::size_t first_newline = chunk.find('\n');
  if (first_newline == std::string_view::npos) return hold(chunk, now);
  std::size_t last_newline = chunk.rfind('\n');
  std::string_view lines = chunk.substr(0, last_newline + 1);
  if (!on_console_.empty()) {
    // Its start is on the console already: continued or redrawn there.
    end_held_line(lines.substr(0, first_newline));
    lines.remove_prefix(first_newline + 1);
    if (shown_ && !lines.empty()) show("", lines);
  } else if (shown_) {
    show(partial_, lines);
  }
  partial_.clear();
  held_since_.reset();
  hold(chunk.substr(last_newline + 1), now);
}

// Keeps PART, the start of a line, until its end comes or it is shown.
void StreamRelay::hold(std::string_view part, Clock::time_point now) {
  if (part.empty()) return;
  partial_.append(part);
  // Only what follows the last '\r' can show: a bar redrawn for an hour
  // holds one drawing, not all of them.
  std::size_t last_return = partial_.rfind('\r');
  if (last_return != std::string::npos && last_return + 1 < partial_.size()) partial_.erase(0, last_return + 1);
  if (partial_.size() >= kMaxHeldLine) return end_held_line("");
  if (!held_since_) held_since_ = now;
}

std::optional<StreamRelay::Clock::time_point> StreamRelay::partial_due() const {
  if (!shown_ || !held_since_) return std::nullopt;
  std::string_view visible = util::visible_of(partial_);
  if (visible.empty() || visible == on_console_) return std::nullopt;
  return *held_since_ + kPartialDelay;
}

void StreamRelay::show_partial() {
  held_since_.reset();
  if (!shown_) return;
  std::string_view visible = util::visible_of(partial_);
  if (visible.empty() || visible == on_console_) return;
  std::string continued = util::update_of_open_line(prefix_, on_console_, visible);
  std::string fresh = prefix_;
  fresh.append(visible);
  console_->write_owned(this, util::OwnedText{continued, fresh}, false, file_.valid());
  on_console_.assign(visible);
}

// The held line ends with REST_OF_LINE: shown whole, or its shown start
// completed (or redrawn) on the console.
void StreamRelay::end_held_line(std::string_view rest_of_line) {
  partial_.append(rest_of_line);
  if (shown_) {
    std::string_view visible = util::visible_of(partial_);
    std::string fresh = prefix_;
    fresh.append(visible).push_back('\n');
    if (on_console_.empty()) {
      console_->write_lines(fresh, file_.valid());
    } else {
      std::string continued = util::update_of_open_line(prefix_, on_console_, visible);
      continued.push_back('\n');
      console_->write_owned(this, util::OwnedText{continued, fresh}, true, file_.valid());
    }
  }
  partial_.clear();
  on_console_.clear();
  held_since_.reset();
}

void StreamRelay::finish() {
  if (!partial_.empty() || !on_console_.empty()) end_held_line("");
  partial_.clear();
}

bool StreamRelay::console_full() const { return shown_ && console_->full(); }

bool StreamRelay::console_has_room() const { return !shown_ || console_->has_room(); }

// Writes WHOLE_LINES (each ending in '\n') with the prefix before each
// line, HEAD (the start of the first, held from an earlier chunk) before
// the first.
void StreamRelay::show(std::string_view head, std::string_view whole_lines) {
  if (std::memchr(whole_lines.data(), '\r', whole_lines.size()) != nullptr || head.find('\r') != std::string_view::npos)
    return show_with_returns(head, whole_lines);
  // One batch buffer for every relay: the launcher relays from one thread,
  // and a buffer per stream would multiply its peak memory by the workers.
  // Sized for the worst case (every byte a newline) without being filled,
  // then written through a cursor: per line one memchr and two copies,
  // which is most of the relay's own work for short lines.
  thread_local std::unique_ptr<char[]> buffer;
  thread_local std::size_t capacity = 0;
  const std::size_t bound = prefix_.size() + head.size() + whole_lines.size() * (prefix_.size() + 1);
  if (bound > capacity) {
    capacity = std::max(bound, 2 * capacity);
    buffer = std::make_unique_for_overwrite<char[]>(capacity);
  }
  char* out = buffer.get();
  auto put = [&out](const char* bytes, std::size_t size) {
    std::memcpy(out, bytes, size);
    out += size;
  };
  put(prefix_.data(), prefix_.size());
  put(head.data(), head.size());
  const char* cursor = whole_lines.data();
  const char* end = cursor + whole_lines.size();
  for (bool first = true; cursor < end; first = false) {
    const char* newline =
        static_cast<const char*>(std::memchr(cursor, '\n', static_cast<std::size_t>(end - cursor)));
    if (!first) put(prefix_.data(), prefix_.size());
    put(cursor, static_cast<std::size_t>(newline - cursor) + 1);
    cursor = newline + 1;
  }
  std::string_view batch(buffer.get(), static_cast<std::size_t>(out - buffer.get()));
  // One write per batch when the console takes it; whole lines dropped and
  // counted when it is stalled (ConsoleOverflow::kDrop).
  console_->write_lines(batch, file_.valid());
}

// As show(), for lines that hold a '\r': each shown as a terminal would
// leave it, its text after the last '\r' under the prefix (a progress bar
// written whole in one chunk, a CRLF line end).
void StreamRelay::show_with_returns(std::string_view head, std::string_view whole_lines) {
  std::string batch;
  std::string first_line(head);
  std::size_t first_end = whole_lines.find('\n');
  first_line.append(whole_lines.substr(0, first_end));
  batch.append(prefix_).append(util::visible_of(first_line)).push_back('\n');
  std::string_view rest = whole_lines.substr(first_end + 1);
  while (!rest.empty()) {
    std::size_t newline = rest.find('\n');
    batch.append(prefix_).append(util::visible_of(rest.substr(0, newline))).push_back('\n');
    rest.remove_prefix(newline + 1);
  }
  console_->write_lines(batch, file_.valid());
}

}  // namespace dlaunch::process
