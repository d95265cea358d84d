#include "forensics/stack_text.h"

#include <algorithm>
#include <charconv>
#include <string>

#include "util/strings.h"

namespace dlaunch::forensics {
namespace {

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r'))
    text.remove_suffix(1);
  return text;
}

std::string bounded(std::string_view text) {
  return std::string(text.substr(0, kMaxFieldLength));
}

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

// Calls ON_LINE for each line of TEXT.
template <typename OnLine>
void for_each_line(std::string_view text, OnLine on_line) {
  while (!text.empty()) {
    std::size_t end = text.find('\n');
    on_line(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
}

// Tools print innermost first; a ThreadStack is outermost first. A thread
// with more frames than the bound keeps its innermost ones (where it is
// stuck) and is marked truncated.
std::vector<ThreadStack> outermost_first(std::vector<ThreadStack> threads) {
  for (auto& thread : threads) std::reverse(thread.frames.begin(), thread.frames.end());
  return threads;
}

bool add_frame(std::vector<ThreadStack>& threads, StackFrame frame) {
  if (threads.empty()) return false;
  ThreadStack& thread = threads.back();
  if (thread.frames.size() >= kMaxFramesPerThread) {
    thread.truncated = true;
    return false;
  }
  thread.frames.push_back(std::move(frame));
  return true;
}

bool start_thread(std::vector<ThreadStack>& threads, std::string id, bool main_thread) {
  if (threads.size() >= kMaxThreadsPerWorker) return false;
  ThreadStack thread;
  thread.thread = bounded(id);
  thread.main_thread = main_thread;
  threads.push_back(std::move(thread));
  return true;
}

// "#3  0x000055d 'function name' - /path/module" (the name and module may be missing).
std::optional<StackFrame> parse_eu_frame(std::string_view line) {
  line = trim(line);
  if (!starts_with(line, "#")) return std::nullopt;
  std::size_t space = line.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  std::string_view rest = trim(line.substr(space));
  std::size_t address_end = rest.find(' ');
  StackFrame frame;
  frame.address = bounded(rest.substr(0, address_end));
  if (!starts_with(frame.address, "0x")) return std::nullopt;
  rest = address_end == std::string_view::npos ? std::string_view() : rest.substr(address_end);
  // The module follows the last " - " (-m); a C++ name may hold " - " itself
  // only inside operator names, which a module path never follows.
  std::size_t dash = rest.rfind(" - ");
  if (dash != std::string_view::npos) {
    frame.file = bounded(trim(rest.substr(dash + 3)));
    rest = rest.substr(0, dash);
  } else if (starts_with(trim(rest), "- ")) {
    frame.file = bounded(trim(trim(rest).substr(2)));
    rest = {};
  }
  frame.function = bounded(trim(rest));
  return frame;
}

// `  File "/path/x.py", line 12 in load_batch`
std::optional<StackFrame> parse_python_frame(std::string_view line) {
  line = trim(line);
  if (!starts_with(line, "File \"")) return std::nullopt;
  std::size_t file_end = line.rfind("\", line ");
  if (file_end == std::string_view::npos || file_end < 6) return std::nullopt;
  StackFrame frame;
  frame.file = bounded(line.substr(6, file_end - 6));
  std::string_view rest = line.substr(file_end + 8);
  int number = 0;
  auto [end, error] = std::from_chars(rest.data(), rest.data() + rest.size(), number);
  if (error == std::errc()) frame.line = number;
  rest = rest.substr(static_cast<std::size_t>(end - rest.data()));
  if (starts_with(rest, " in ")) frame.function = bounded(rest.substr(4));
  return frame;
}

}  // namespace

std::vector<ThreadStack> parse_eu_stack(std::string_view text, pid_t pid) {
  std::vector<ThreadStack> threads;
  bool taking = false;  // frames go to the last thread started
  const std::string main_id = std::to_string(pid);
  for_each_line(text, [&](std::string_view line) {
    line = trim(line);
    if (starts_with(line, "TID ") && !line.empty() && line.back() == ':') {
      std::string id(trim(line.substr(4, line.size() - 5)));
      taking = start_thread(threads, id, id == main_id);
      return;
    }
    if (!taking) return;
    if (auto frame = parse_eu_frame(line)) add_frame(threads, std::move(*frame));
  });
  return outermost_first(std::move(threads));
}

std::vector<ThreadStack> parse_faulthandler(std::string_view text) {
  std::vector<ThreadStack> threads;
  bool taking = false;
  for_each_line(text, [&](std::string_view line) {
    std::string_view trimmed = trim(line);
    bool current = starts_with(trimmed, "Current thread ");
    if (current || starts_with(trimmed, "Thread ")) {
      std::string_view id = trimmed.substr(current ? 15 : 7);
      id = id.substr(0, id.find(' '));
      taking = start_thread(threads, std::string(id), current);
      return;
    }
    if (!taking) return;
    if (auto frame = parse_python_frame(trimmed)) add_frame(threads, std::move(*frame));
    else if (trimmed == "...") threads.back().truncated = true;  // faulthandler's own depth limit
  });
  return outermost_first(std::move(threads));
}

}  // namespace dlaunch::forensics
