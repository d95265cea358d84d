// Reads the last Python traceback out of a worker's last lines, by hand
// (no std::regex: libstdc++'s recurses per character, and a worker's line
// may be a megabyte).
#include "doctor/traceback.h"

#include <cctype>

namespace dlaunch::doctor {

namespace {

constexpr std::string_view kHead = "Traceback (most recent call last):";
constexpr std::string_view kFrameStart = "  File \"";
// Bounds for outside text: a deep recursion prints a thousand frames, and
// only the innermost matter; a Python name is never this long.
constexpr std::size_t kMaxFrames = 256;
constexpr std::size_t kMaxNameLength = 256;
constexpr std::size_t kMaxPrefixLength = 64;

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

// LINE without its CR and without a "[rank2]:" style prefix a launcher
// (torchrun's --tee, dlaunch's own rank prefixes) put before it.
std::string_view unprefixed(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.size() < 3 || line[0] != '[') return line;
  auto close = line.find("]:");
  if (close == std::string_view::npos || close > kMaxPrefixLength) return line;
  line.remove_prefix(close + 2);
  // "[rank2]: Traceback" and "[rank2]:   File" have a space after the
  // prefix, torchrun's "[default0]:  File" none: a frame keeps its indent.
  bool spaced = line.size() > 1 && line[0] == ' ' && (line[1] != ' ' || starts_with(line.substr(1), kFrameStart));
  if (spaced) line.remove_prefix(1);
  return line;
}

// `  File "PATH", line N, in NAME`; nullopt for any other line.
std::optional<Frame> parse_frame(std::string_view line) {
  if (!starts_with(line, kFrameStart)) return std::nullopt;
  line.remove_prefix(kFrameStart.size());
  auto quote = line.find("\", line ");
  if (quote == std::string_view::npos) return std::nullopt;
  Frame frame;
  frame.file = std::string(line.substr(0, quote));
  line.remove_prefix(quote + 8);
  std::size_t digits = 0;
  long number = 0;
  while (digits < line.size() && digits < 9 && std::isdigit(static_cast<unsigned char>(line[digits])) != 0)
    number = number * 10 + (line[digits++] - '0');
  if (digits == 0) return std::nullopt;
  frame.line = static_cast<int>(number);
  line.remove_prefix(digits);
  if (starts_with(line, ", in ")) frame.function = std::string(line.substr(5, kMaxNameLength));
  return frame;
}

bool is_name_character(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '.';
}

// Where the traceback that begins at lines[head] ends, filled into ERROR.
bool read_body(const std::vector<std::string>& lines, std::size_t head, PythonError& error) {
  for (std::size_t i = head + 1; i < lines.size(); ++i) {
    std::string_view line = unprefixed(lines[i]);
    if (auto frame = parse_frame(line)) {
      if (error.frames.size() == kMaxFrames) error.frames.erase(error.frames.begin());
      error.frames.push_back(std::move(*frame));
      continue;
    }
    if (line.empty() || line[0] == ' ' || line[0] == '\t') continue;  // source lines, carets
    auto exception = split_exception_line(line);
    if (!exception || error.frames.empty()) return false;
    error.type = exception->first;
    error.message = exception->second;
    for (std::size_t j = head; j <= i; ++j) error.lines.emplace_back(unprefixed(lines[j]));
    return true;
  }
  return false;
}

}  // namespace

std::optional<std::pair<std::string, std::string>> split_exception_line(std::string_view line) {
  std::size_t end = 0;
  while (end < line.size() && end <= kMaxNameLength && is_name_character(line[end])) ++end;
  if (end == 0 || end > kMaxNameLength || line[end - 1] == '.') return std::nullopt;
  if (std::isdigit(static_cast<unsigned char>(line[0])) != 0 || line[0] == '.') return std::nullopt;
  if (end < line.size() && line[end] != ':') return std::nullopt;
  std::string_view message = end < line.size() ? line.substr(end + 1) : std::string_view();
  if (!message.empty() && message[0] == ' ') message.remove_prefix(1);
  return std::pair{std::string(line.substr(0, end)), std::string(message)};
}

std::optional<PythonError> parse_traceback(const std::vector<std::string>& lines) {
  for (std::size_t i = lines.size(); i-- > 0;) {
    if (!starts_with(unprefixed(lines[i]), kHead)) continue;
    PythonError error;
    if (read_body(lines, i, error)) return error;
    return std::nullopt;  // the last traceback is cut: an older one did not end the process
  }
  return std::nullopt;
}

bool is_library_file(std::string_view file) {
  for (std::string_view mark : {"site-packages/", "dist-packages/", "/torch/", "/lib/python"}) {
    if (file.find(mark) != std::string_view::npos) return true;
  }
  return starts_with(file, "<");  // "<frozen runpy>", "<string>"
}

std::optional<Frame> innermost_user_frame(const PythonError& error) {
  for (auto frame = error.frames.rbegin(); frame != error.frames.rend(); ++frame) {
    if (!is_library_file(frame->file)) return *frame;
  }
  return std::nullopt;
}

}  // namespace dlaunch::doctor
