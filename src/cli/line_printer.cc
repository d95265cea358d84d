#include "cli/line_printer.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "util/error.h"
#include "util/terminal_text.h"

namespace dlaunch::cli {

LineFilter::LineFilter(const std::string& pattern) : active_(!pattern.empty()) {
  if (!active_) return;
  int error = ::regcomp(&regex_, pattern.c_str(), REG_EXTENDED | REG_NOSUB);
  if (error != 0) {
    char text[256];
    ::regerror(error, &regex_, text, sizeof(text));
    active_ = false;
    throw util::UsageError(fmt::format("--grep '{}': not a regular expression: {}", pattern, text));
  }
}

LineFilter::~LineFilter() {
  if (active_) ::regfree(&regex_);
}

bool LineFilter::keeps(const std::string& line) const {
  return !active_ || ::regexec(&regex_, line.c_str(), 0, nullptr, 0) == 0;
}

LinePrinter::LinePrinter(const std::string& pattern, int tail, std::FILE* out)
    : filter_(pattern), tail_(tail), out_(out) {}

std::string LinePrinter::prefix_of(int rank) const {
  return prefixed_ ? fmt::format("[rank{}]:", rank) : std::string();
}

// LINE as printed, with its newline.
std::string LinePrinter::formatted(const jobs::MergedLine& line) const {
  if (format_ == LineFormat::kText) return prefix_of(line.rank) + line.text + "\n";
  nlohmann::ordered_json object = {{"rank", line.rank},
                                   {"stream", line.stream == 2 ? "stderr" : "stdout"},
                                   {"time_ms", nullptr},
                                   {"line", line.text}};
  if (line.unix_ms != 0) object["time_ms"] = line.unix_ms;
  // A worker's bytes need not be UTF-8; JSON must be.
  return object.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

void LinePrinter::write(std::string_view text) { std::fwrite(text.data(), 1, text.size(), out_); }

void LinePrinter::print(const jobs::MergedLine& line) {
  if (!filter_.keeps(line.text)) return;
  Source source{line.rank, line.stream};
  if (drawn_.contains(source)) return complete_drawn_line(source, line.text);
  std::string text = formatted(line);
  if (tail_ < 0) {
    end_open_line();
    write(text);
    return;
  }
  kept_.push_back(std::move(text));
  if (kept_.size() > static_cast<std::size_t>(tail_)) kept_.pop_front();
}

void LinePrinter::flush_tail() {
  for (const auto& text : kept_) write(text);
  kept_.clear();
  tail_ = -1;
  std::fflush(out_);
}

void LinePrinter::show_partial(int rank, int stream, std::string_view held) {
  if (!shows_partials()) return;
  std::string_view visible = util::visible_of(held);
  if (visible.empty()) return;  // only '\r's so far: a terminal would show nothing new
  Source source{rank, stream};
  auto drawn = drawn_.find(source);
  // Unchanged: nothing to do, also when another line interrupted it (eight
  // ranks each waiting on a prompt would otherwise print eight lines a poll).
  if (drawn != drawn_.end() && drawn->second == visible) return;
  std::string text;
  if (on_screen_ == source) {
    text = util::update_of_open_line(prefix_of(rank), drawn->second, visible);
  } else {
    end_open_line();
    text = prefix_of(rank);
    text.append(visible);
    on_screen_ = source;
  }
  write(text);
  drawn_[source].assign(visible);
}

// The newline of SOURCE's drawn line came with TEXT, the whole line: its
// drawing is completed where the cursor still ends it (no line printed
// twice), else the line is shown whole on a line of its own, as drawn:
// after the last '\r'.
void LinePrinter::complete_drawn_line(const Source& source, std::string_view text) {
  auto drawn = drawn_.find(source);
  std::string_view visible = util::visible_of(text);
  std::string out;
  if (on_screen_ == source) {
    out = util::update_of_open_line(prefix_of(source.first), drawn->second, visible);
    on_screen_.reset();
  } else {
    end_open_line();
    out = prefix_of(source.first);
    out.append(visible);
  }
  out.push_back('\n');
  write(out);
  drawn_.erase(drawn);
}

// Another line is to be printed: the drawing the cursor ends gets its '\n'
// first, so no two lines share one; it stays drawn, and its next drawing
// starts a line of its own.
void LinePrinter::end_open_line() {
  if (!on_screen_) return;
  write("\n");
  on_screen_.reset();
}

void WaitingLines::show(const Sources& sources, LinePrinter& printer) {
  if (!printer.shows_partials()) return;
  held_at_.resize(sources.size());
  for (std::size_t i = 0; i < sources.size(); ++i) {
    const jobs::LogLineSource& source = *sources[i];
    auto held = source.held_part();
    std::optional<std::uint64_t> offset;
    if (held) offset = source.held_offset();
    // The same start as at the last look: the line waited a poll for its end.
    if (held && held_at_[i] == offset) printer.show_partial(source.rank(), source.stream(), *held);
    held_at_[i] = offset;
  }
}

}  // namespace dlaunch::cli
