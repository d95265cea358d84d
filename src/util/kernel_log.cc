#include "util/kernel_log.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

#include "util/strings.h"

namespace dlaunch::util {
namespace {

// A /dev/kmsg record is at most about 8 KiB (the kernel's CONSOLE_EXT_LOG_MAX):
// a smaller buffer gets EINVAL.
constexpr std::size_t kRecordBytes = 8192;

}  // namespace

std::string kernel_message(std::string_view record) {
  std::string_view line = record.substr(0, record.find('\n'));
  const std::size_t semicolon = line.find(';');
  const std::size_t comma = line.find(',');
  // The header is digits and commas and a flag character before the ';'.
  const bool has_header = semicolon != std::string_view::npos && comma != std::string_view::npos &&
                          comma < semicolon && line.find_first_not_of("0123456789,-+c") >= semicolon;
  if (has_header) line.remove_prefix(semicolon + 1);
  return std::string(line);
}

KernelLog::KernelLog(std::string path) : path_(std::move(path)) {
  fd_ = Fd(::open(path_.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (!fd_) {
    error_ = path_ + ": " + std::strerror(errno);
    return;
  }
  ::lseek(fd_.get(), 0, SEEK_END);
}

std::vector<std::string> KernelLog::read_new(std::size_t max_messages) {
  std::vector<std::string> messages;
  if (!fd_) return messages;
  std::string buffer(kRecordBytes, '\0');
  while (messages.size() < max_messages) {
    ssize_t got = ::read(fd_.get(), buffer.data(), buffer.size());
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && errno == EPIPE) {  // overwritten before read: the place moved on
      lost_records_ = true;
      continue;
    }
    if (got <= 0) break;  // EAGAIN: nothing new; 0: a plain file's end
    // /dev/kmsg gives one record a read; a plain file gives many lines.
    partial_.append(buffer.data(), static_cast<std::size_t>(got));
    std::size_t start = 0;
    for (std::size_t end; (end = partial_.find('\n', start)) != std::string::npos; start = end + 1) {
      std::string_view line(partial_.data() + start, end - start);
      // A record's continuation lines (" KEY=VALUE") belong to it: skipped.
      if (!line.empty() && line.front() != ' ') messages.push_back(kernel_message(line));
    }
    partial_.erase(0, start);
    if (partial_.size() > kRecordBytes) partial_.clear();  // no newline in sight: not a log
  }
  return messages;
}

}  // namespace dlaunch::util
