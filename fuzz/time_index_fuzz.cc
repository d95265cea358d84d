// time_index_fuzz: a worker log's time index read back (process/time_index.h
// TimeMarks), on any bytes fed in any pieces.
//
// The index sits in a folder others may write in: it may hold anything,
// of any length, without newlines. Checks that reading never throws, that
// every mark it gives reads back to the same mark when written again, that it holds no more than a piece and a line
// (bounded memory), and that the pieces do not change the marks.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "process/time_index.h"

namespace {

using namespace dlaunch::process;

void check(bool condition, const char* what) {
  if (condition) return;
  std::fprintf(stderr, "time_index_fuzz: invariant broken: %s\n", what);
  std::abort();
}

// The marks of TEXT fed in pieces of PIECE bytes.
std::vector<std::pair<std::uint64_t, std::int64_t>> marks_in_pieces(std::string_view text, std::size_t piece) {
  TimeMarks marks;
  std::vector<std::pair<std::uint64_t, std::int64_t>> found;
  for (std::size_t at = 0; at < text.size() && !marks.given_up(); at += piece) {
    marks.feed(text.substr(at, piece));
    while (auto mark = marks.next()) found.emplace_back(mark->offset, mark->unix_ms);
  }
  return found;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::size_t piece = 1 + data[0] % 64;
  auto whole = marks_in_pieces(text, text.size() + 1);
  auto pieces = marks_in_pieces(text, piece);
  // A line longer than kMaxLineBytes is dropped when fed in pieces but read
  // (and refused as no mark) when whole: the marks are the same either way.
  check(whole == pieces, "the pieces changed the marks");
  for (const auto& [offset, unix_ms] : whole) {
    std::string line = std::to_string(offset) + " " + std::to_string(unix_ms);
    auto again = parse_time_mark(line);
    check(again && again->offset == offset && again->unix_ms == unix_ms, "a mark does not read back");
  }
  return 0;
}
