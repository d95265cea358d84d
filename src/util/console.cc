#include "util/console.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <fcntl.h>
#include <memory>
#include <poll.h>
#include <string>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

namespace dlaunch::util {
namespace {

std::uint64_t count_lines(std::string_view text) {
  auto lines = static_cast<std::uint64_t>(std::count(text.begin(), text.end(), '\n'));
  if (!text.empty() && text.back() != '\n') ++lines;
  return lines;
}

// A description of FD's pipe, FIFO or terminal of our own, non-blocking;
// invalid when the kernel will not make one (no /proc, a FIFO without a
// reader, a terminal that hung up) or it turns out to be another file.
Fd reopen_nonblocking(int fd, const struct stat& info) {
  std::string path = "/proc/self/fd/" + std::to_string(fd);
  Fd own(::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  struct stat again;
  if (!own || ::fstat(own.get(), &again) != 0 || again.st_dev != info.st_dev ||
      again.st_ino != info.st_ino)
    return Fd();
  return own;
}

bool is_stream(const struct stat& info) {
  return S_ISFIFO(info.st_mode) || S_ISSOCK(info.st_mode) || S_ISCHR(info.st_mode);
}

std::string default_notice(const ConsoleDrops& drops) {
  return "console stalled, " + std::to_string(drops.total()) + " lines dropped\n";
}

}  // namespace

ConsoleSink::ConsoleSink(int fd, std::size_t capacity) : fd_(fd), capacity_(capacity) {
  struct stat info;
  if (::fstat(fd, &info) != 0) {
    error_ = errno;
    return;
  }
  device_ = info.st_dev;
  inode_ = info.st_ino;
  if (S_ISREG(info.st_mode) || S_ISBLK(info.st_mode)) {
    mode_ = Mode::kFile;
  } else if (S_ISSOCK(info.st_mode)) {
    mode_ = Mode::kSocket;
  } else {
    reopened_ = reopen_nonblocking(fd, info);
    mode_ = reopened_ ? Mode::kReopened : Mode::kPolled;
  }
}

void ConsoleSink::write_lines(std::string_view lines, bool filed) {
  std::lock_guard lock(mutex_);
  end_open_line_locked();
  write_locked(lines, filed, lines_limit_locked());
}

void ConsoleSink::write_owned(const void* owner, OwnedText text, bool ends_line, bool filed) {
  std::lock_guard lock(mutex_);
  std::string_view chosen = text.continued;
  if (owner == nullptr || open_owner_ != owner || !mid_line_) {
    end_open_line_locked();
    chosen = text.fresh;
  }
  write_locked(chosen, filed, lines_limit_locked());
  open_owner_ = ends_line ? nullptr : owner;
}

void ConsoleSink::write_message(std::string_view text) {
  if (text.empty()) return;
  std::string line;
  if (text.back() != '\n') {
    line.assign(text).push_back('\n');
    text = line;
  }
  std::lock_guard lock(mutex_);
  end_open_line_locked();
  write_locked(text, false, messages_limit_locked());
}

std::size_t ConsoleSink::lines_limit_locked() const {
  return overflow_ == ConsoleOverflow::kBlock ? kUnbounded : capacity_;
}

// Messages are bounded under both policies (a hostile peer may make node 0
// log refusals for as long as the console stalls). Under kBlock the relayed
// lines pass the capacity by what their feeders read before they saw
// full(), so messages get room well beyond it.
std::size_t ConsoleSink::messages_limit_locked() const {
  return overflow_ == ConsoleOverflow::kBlock ? kBlockedMessageRoom * capacity_ + kMessageReserve
                                              : capacity_ + kMessageReserve;
}

// Another writer's line must not continue the one shown in part: the
// newline ends it where it stands (a progress bar stays as drawn).
void ConsoleSink::end_open_line_locked() {
  open_owner_ = nullptr;
  if (mid_line_) write_locked("\n", false, kUnbounded);
}

// What the console took or the backlog kept, in order: whether the console
// will stand mid-line after it.
void ConsoleSink::note_accepted(std::string_view accepted) {
  if (!accepted.empty()) mid_line_ = accepted.back() != '\n';
}

// The backlog goes first, so lines keep their order; TEXT is written at
// once only when nothing is waiting.
void ConsoleSink::write_locked(std::string_view text, bool filed, std::size_t limit) {
  if (!backlog_.empty()) flush_locked();
  if (mode_ != Mode::kBroken && backlog_.empty()) {
    WriteResult result = write_some(text);
    note_accepted(text.substr(0, result.written));
    if (result.written == text.size()) return;
    bool mid_line = result.written > 0 && text[result.written - 1] != '\n';
    text.remove_prefix(result.written);
    if (result.error != EAGAIN) break_locked(result.error);
    if (mid_line && mode_ != Mode::kBroken) {
      // The rest of a line the console took in part is kept whatever the
      // room: a half line would be worse than a slightly longer backlog.
      std::size_t end = text.find('\n');
      end = end == std::string_view::npos ? text.size() : end + 1;
      backlog_.push_back(Segment{std::string(text.substr(0, end)), 0, filed});
      backlog_bytes_ += end;
      note_accepted(text.substr(0, end));
      text.remove_prefix(end);
    }
  }
  if (mode_ == Mode::kBroken) {
    count_dropped(text, filed);
    return;
  }
  enqueue_locked(text, filed, limit);
}

// Keeps as many whole lines of LINES as fit under LIMIT; drops the rest.
void ConsoleSink::enqueue_locked(std::string_view lines, bool filed, std::size_t limit) {
  if (lines.empty()) return;
  std::size_t room = limit > backlog_bytes_ ? limit - backlog_bytes_ : 0;
  std::size_t keep = lines.size();
  if (keep > room) {
    std::size_t last = lines.substr(0, room).rfind('\n');
    keep = last == std::string_view::npos ? 0 : last + 1;
  }
  if (keep > 0) {
    // Append to the last segment unless it is being written (its written
    // part is freed only with it) or differs in being filed.
    Segment* last = backlog_.empty() ? nullptr : &backlog_.back();
    if (last != nullptr && last->sent == 0 && last->filed == filed)
      last->bytes.append(lines.substr(0, keep));
    else
      backlog_.push_back(Segment{std::string(lines.substr(0, keep)), 0, filed});
    backlog_bytes_ += keep;
    note_accepted(lines.substr(0, keep));
  }
  count_dropped(lines.substr(keep), filed);
}

void ConsoleSink::count_dropped(std::string_view lines, bool filed) {
  std::uint64_t count = count_lines(lines);
  if (count == 0) return;
  (filed ? dropped_.filed : dropped_.unfiled) += count;
  (filed ? since_notice_.filed : since_notice_.unfiled) += count;
}

void ConsoleSink::flush() {
  std::lock_guard lock(mutex_);
  flush_locked();
}

void ConsoleSink::flush_locked() {
  while (!backlog_.empty() && mode_ != Mode::kBroken) {
    Segment& segment = backlog_.front();
    WriteResult result = write_some(std::string_view(segment.bytes).substr(segment.sent));
    segment.sent += result.written;
    backlog_bytes_ -= result.written;
    if (segment.sent == segment.bytes.size()) backlog_.pop_front();
    if (result.error == EAGAIN) return;
    if (result.error != 0) break_locked(result.error);
  }
  if (backlog_.empty() && since_notice_.total() > 0 && mode_ != Mode::kBroken)
    write_notice_locked();
}

// The console drained after dropping lines: say so where they are missing.
void ConsoleSink::write_notice_locked() {
  std::string notice = notice_ ? notice_(since_notice_) : default_notice(since_notice_);
  since_notice_ = {};
  if (notice.empty()) return;
  if (notice.back() != '\n') notice.push_back('\n');
  end_open_line_locked();
  // The backlog is empty here, so this writes at once and does not recurse.
  write_locked(notice, false, capacity_ + kMessageReserve);
}

void ConsoleSink::break_locked(int error) {
  mode_ = Mode::kBroken;
  error_ = error;
  for (const Segment& segment : backlog_)
    count_dropped(std::string_view(segment.bytes).substr(segment.sent), segment.filed);
  backlog_.clear();
  backlog_bytes_ = 0;
  // The reopened descriptor stays open: an event loop may still watch it,
  // and a closed number could be reused by a descriptor it watches too.
}

bool ConsoleSink::drain(std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    int fd;
    {
      std::lock_guard lock(mutex_);
      flush_locked();
      if (backlog_.empty()) return true;
      fd = watch_fd_locked();
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    // Wait for room outside the lock, so other threads go on logging.
    pollfd room{fd, POLLOUT, 0};
    int timeout = static_cast<int>(std::min<std::int64_t>(left.count(), 50));
    if (::poll(&room, fd >= 0 ? 1 : 0, timeout) < 0 && errno != EINTR) return false;
  }
}

void ConsoleSink::abandon() {
  std::lock_guard lock(mutex_);
  for (const Segment& segment : backlog_)
    (segment.filed ? unwritten_.filed : unwritten_.unfiled) +=
        count_lines(std::string_view(segment.bytes).substr(segment.sent));
  backlog_.clear();
  backlog_bytes_ = 0;
}

void ConsoleSink::set_overflow(ConsoleOverflow overflow) {
  std::lock_guard lock(mutex_);
  overflow_ = overflow;
}

ConsoleOverflow ConsoleSink::overflow() const {
  std::lock_guard lock(mutex_);
  return overflow_;
}

bool ConsoleSink::full() const {
  std::lock_guard lock(mutex_);
  return overflow_ == ConsoleOverflow::kBlock && mode_ != Mode::kBroken && backlog_bytes_ >= capacity_;
}

bool ConsoleSink::has_room() const {
  std::lock_guard lock(mutex_);
  return overflow_ == ConsoleOverflow::kDrop || mode_ == Mode::kBroken || backlog_bytes_ <= capacity_ / 2;
}

std::size_t ConsoleSink::backlog_bytes() const {
  std::lock_guard lock(mutex_);
  return backlog_bytes_;
}

bool ConsoleSink::backlogged() const {
  std::lock_guard lock(mutex_);
  return !backlog_.empty();
}

int ConsoleSink::watch_fd() const {
  std::lock_guard lock(mutex_);
  return watch_fd_locked();
}

int ConsoleSink::watch_fd_locked() const {
  switch (mode_) {
    case Mode::kReopened: return reopened_.get();
    case Mode::kSocket:
    case Mode::kPolled: return fd_;
    case Mode::kFile:
    case Mode::kBroken: return -1;
  }
  return -1;
}

ConsoleDrops ConsoleSink::dropped() const {
  std::lock_guard lock(mutex_);
  return dropped_;
}

ConsoleDrops ConsoleSink::unwritten() const {
  std::lock_guard lock(mutex_);
  return unwritten_;
}

int ConsoleSink::error() const {
  std::lock_guard lock(mutex_);
  return error_;
}

void ConsoleSink::set_drop_notice(std::function<std::string(const ConsoleDrops&)> notice) {
  std::lock_guard lock(mutex_);
  notice_ = std::move(notice);
}

bool ConsoleSink::same_stream(int fd) const {
  std::lock_guard lock(mutex_);
  struct stat info;
  return mode_ != Mode::kBroken && ::fstat(fd, &info) == 0 && is_stream(info) &&
         info.st_dev == device_ && info.st_ino == inode_;
}

// Never waits. EAGAIN in the result: the console is full for now.
WriteResult ConsoleSink::write_some(std::string_view data) {
  switch (mode_) {
    case Mode::kFile: return write_now(fd_, data);
    case Mode::kReopened: return write_now(reopened_.get(), data);
    case Mode::kSocket: return send_some(data);
    case Mode::kPolled: return write_polled(data);
    case Mode::kBroken: return WriteResult{0, error_};
  }
  return WriteResult{0, error_};
}

namespace {

// Calls WRITE_SOME on what is left of DATA until all of it is out or a call
// fails. WRITE_SOME makes one send() or write() and returns its result (-1
// with errno EAGAIN when it sees no room). EINTR is retried, and
// EWOULDBLOCK reads as EAGAIN, the one "try later" the callers know.
template <typename WriteSome>
WriteResult write_while_room(std::string_view data, WriteSome write_some) {
  WriteResult result;
  while (result.written < data.size()) {
    ssize_t wrote = write_some(data.substr(result.written));
    if (wrote < 0) {
      if (errno == EINTR) continue;
      result.error = errno == EWOULDBLOCK ? EAGAIN : errno;
      break;
    }
    result.written += static_cast<std::size_t>(wrote);
  }
  return result;
}

}  // namespace

WriteResult ConsoleSink::send_some(std::string_view data) {
  return write_while_room(data, [this](std::string_view rest) {
    return ::send(fd_, rest.data(), rest.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
  });
}

// The fallback for a blocking description we could not reopen: a write of
// at most PIPE_BUF bytes to a pipe that polls writable does not wait (a
// free pipe slot holds that much), unless another writer fills it first.
WriteResult ConsoleSink::write_polled(std::string_view data) {
  return write_while_room(data, [this](std::string_view rest) -> ssize_t {
    pollfd room{fd_, POLLOUT, 0};
    if (::poll(&room, 1, 0) <= 0 || (room.revents & (POLLOUT | POLLERR | POLLHUP)) == 0) {
      errno = EAGAIN;
      return -1;
    }
    return ::write(fd_, rest.data(), std::min<std::size_t>(rest.size(), PIPE_BUF));
  });
}

namespace {

struct ProcessConsoles {
  ConsoleSink out{STDOUT_FILENO};
  std::unique_ptr<ConsoleSink> own_err;
  ConsoleSink* err = nullptr;
};

ProcessConsoles& process_consoles() {
  // Never destroyed: a thread may still log while static destructors run.
  static ProcessConsoles* consoles = [] {
    auto* made = new ProcessConsoles;
    if (made->out.same_stream(STDERR_FILENO)) {
      made->err = &made->out;
    } else {
      made->own_err = std::make_unique<ConsoleSink>(STDERR_FILENO);
      made->err = made->own_err.get();
    }
    return made;
  }();
  return *consoles;
}

}  // namespace

ConsoleSink& console_out() { return process_consoles().out; }
ConsoleSink& console_err() { return *process_consoles().err; }

}  // namespace dlaunch::util
