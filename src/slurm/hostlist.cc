#include "slurm/hostlist.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>
#include <utility>

#include "util/error.h"

namespace dlaunch::slurm {
namespace {

constexpr std::uint64_t kMaxNumber = std::numeric_limits<std::uint64_t>::max();
// Slurm's MAX_RANGE: scontrol refuses one range of more hosts ("Too many
// hosts in range"). Several ranges, or groups, may name more together.
constexpr std::uint64_t kMaxRangeHosts = 65536;
constexpr std::string_view kRangeExample = "e.g. n[1-3,5] or rack[1-2]-node[01-08]";

// LOW-HIGH inside brackets. Numbers print zero-padded to WIDTH, the length of
// LOW as written: Slurm expands "n[001-3]" to n001..n003 and "n[1-010]" to
// n1..n10 (the padding of HIGH is ignored).
struct Range {
  std::uint64_t low;
  std::uint64_t high;
  std::size_t width;
};

// Literal text followed by one bracket group: "rack" [1-2].
struct Segment {
  std::string text;
  std::vector<Range> ranges;
};

// One name of an expression, kept compact so that first/count never expand
// it. Slurm allows no text after the last bracket group, so TAIL is empty
// unless there are no groups at all (a plain host name).
struct Pattern {
  std::vector<Segment> segments;
  std::string tail;
};

// Spelled out rather than std::isspace, whose answer depends on the locale.
constexpr std::string_view kSeparators = ", \t\n\v\f\r";

bool is_separator(char c) { return kSeparators.find(c) != std::string_view::npos; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

std::string describe(char c) {
  if (c >= ' ' && c <= '~') return fmt::format("'{}'", c);
  return fmt::format("character 0x{:02x}", static_cast<unsigned char>(c));
}

// Reads an expression into patterns. Positions in messages are 1-based
// character offsets into the whole expression, so users can find the fault.
class Parser {
 public:
  explicit Parser(std::string_view expression) : expression_(expression) {}

  std::vector<Pattern> parse() const {
    std::vector<Pattern> patterns;
    std::size_t position = 0;
    while (position < expression_.size()) {
      if (is_separator(expression_[position])) {
        ++position;
        continue;
      }
      std::size_t end = token_end(position);
      patterns.push_back(parse_pattern(position, end));
      position = end;
    }
    return patterns;
  }

 private:
  [[noreturn]] void fail(std::size_t position, std::string_view fault,
                         std::string_view expected) const {
    throw util::InputError(fmt::format("invalid hostlist '{}': {} at position {}; expected {}",
                                 expression_, fault, position + 1, expected));
  }

  // The end of the name starting at BEGIN. Separators inside brackets belong
  // to the name ("n[1,3]"), so bracket balance is checked here.
  std::size_t token_end(std::size_t begin) const {
    std::size_t open_at = std::string_view::npos;
    std::size_t i = begin;
    for (; i < expression_.size(); ++i) {
      char c = expression_[i];
      bool inside = open_at != std::string_view::npos;
      if (!inside && is_separator(c)) break;
      if (c == '[' && inside)
        fail(i, "nested '['",
             fmt::format("ranges inside one level of brackets ({})", kRangeExample));
      if (c == ']' && !inside)
        fail(i, "']' without a '[' before it",
             fmt::format("balanced brackets ({})", kRangeExample));
      if (inside && c != ',' && is_separator(c))
        fail(i, "whitespace inside brackets",
             fmt::format("no spaces in a range ({})", kRangeExample));
      if (c == '[') open_at = i;
      if (c == ']') open_at = std::string_view::npos;
    }
    if (open_at != std::string_view::npos)
      fail(open_at, "'[' that is never closed", "a ']' after the ranges");
    return i;
  }

  Pattern parse_pattern(std::size_t begin, std::size_t end) const {
    Pattern pattern;
    std::size_t text_start = begin;
    for (std::size_t open = expression_.find('[', begin); open < end;
         open = expression_.find('[', text_start)) {
      std::size_t close = expression_.find(']', open);  // token_end made sure it exists
      pattern.segments.push_back({std::string(expression_.substr(text_start, open - text_start)),
                                  parse_group(open + 1, close)});
      text_start = close + 1;
    }
    pattern.tail = std::string(expression_.substr(text_start, end - text_start));
    if (!pattern.segments.empty() && !pattern.tail.empty())
      fail(text_start, fmt::format("text '{}' after the last ']'", pattern.tail),
           "nothing after the last bracket group; Slurm allows text only before and between "
           "groups (e.g. rack[1-2]-node[01-08])");
    return pattern;
  }

  // The comma-separated ranges between BEGIN and END (exclusive of brackets).
  std::vector<Range> parse_group(std::size_t begin, std::size_t end) const {
    std::vector<Range> ranges;
    std::size_t start = begin;
    while (true) {
      std::size_t comma = std::min(expression_.find(',', start), end);
      if (comma == start)
        fail(start, "empty range",
             fmt::format("a number or LOW-HIGH between commas ({})", kRangeExample));
      ranges.push_back(parse_range(start, comma));
      if (comma == end) return ranges;
      start = comma + 1;
    }
  }

  Range parse_range(std::size_t begin, std::size_t end) const {
    std::size_t dash = expression_.find('-', begin);
    if (dash >= end) {
      std::uint64_t number = parse_number(begin, end);
      return {number, number, end - begin};
    }
    std::uint64_t low = parse_number(begin, dash);
    std::uint64_t high = parse_number(dash + 1, end);
    if (low > high)
      fail(begin, fmt::format("reversed range '{}'", expression_.substr(begin, end - begin)),
           "LOW-HIGH with LOW <= HIGH (e.g. n[3-5])");
    if (high - low >= kMaxRangeHosts)
      fail(begin,
           fmt::format("range '{}' of more than {} hosts", expression_.substr(begin, end - begin),
                       kMaxRangeHosts),
           fmt::format("at most {} hosts in one range, as Slurm allows; split a longer one into "
                       "several (e.g. n[1-65536,65537-100000])",
                       kMaxRangeHosts));
    return {low, high, dash - begin};
  }

  std::uint64_t parse_number(std::size_t begin, std::size_t end) const {
    if (begin == end)
      fail(begin, "missing number", fmt::format("digits on both sides of '-' ({})", kRangeExample));
    std::uint64_t value = 0;
    for (std::size_t i = begin; i < end; ++i) {
      char c = expression_[i];
      if (!is_digit(c))
        fail(i, fmt::format("unexpected {} inside brackets", describe(c)),
             fmt::format("only digits, '-' and ',' inside brackets ({})", kRangeExample));
      auto digit = static_cast<std::uint64_t>(c - '0');
      if (value > (kMaxNumber - digit) / 10)
        fail(begin, fmt::format("number '{}' too large", expression_.substr(begin, end - begin)),
             fmt::format("numbers up to {}", kMaxNumber));
      value = value * 10 + digit;
    }
    return value;
  }

  std::string_view expression_;
};

void append_number(std::string& out, std::uint64_t number, std::size_t width) {
  std::string digits = std::to_string(number);
  if (digits.size() < width) out.append(width - digits.size(), '0');
  out += digits;
}

// Calls VISIT with every number of RANGE; written so that HIGH = 2^64-1
// does not wrap around.
template <typename Visit>
void for_each_number(const Range& range, Visit&& visit) {
  for (std::uint64_t number = range.low;; ++number) {
    visit(number);
    if (number == range.high) return;
  }
}

using Visitor = std::function<void(std::string_view)>;

// Slurm's order for several groups is not the plain cartesian one: the last
// group varies fastest, then the first, the second, ... and the last but one
// slowest ("a[1-2]b[3-4]c[5-6]" gives a1b3c5 a1b3c6 a2b3c5 a2b3c6 a1b4c5 ...).
// Slurm reads the last group as a range behind a prefix, and that prefix
// ("a[1-2]b[3-4]c") expands with its first group fastest. So the prefixes
// are enumerated here, and the last group's numbers appended to each.

// Chooses a number for SEGMENTS[LEVEL - 1], then recurses into the earlier
// (faster) groups; at level 0 NUMBERS holds one choice per group.
void expand_prefixes(std::span<const Segment> segments, std::vector<std::string>& numbers,
                     std::size_t level, const Visitor& visit) {
  if (level == 0) {
    std::string prefix;
    for (std::size_t i = 0; i < segments.size(); ++i) prefix += segments[i].text + numbers[i];
    visit(prefix);
    return;
  }
  for (const Range& range : segments[level - 1].ranges) {
    for_each_number(range, [&](std::uint64_t number) {
      numbers[level - 1].clear();
      append_number(numbers[level - 1], number, range.width);
      expand_prefixes(segments, numbers, level - 1, visit);
    });
  }
}

// Calls VISIT with each prefix a bracketed pattern's last group follows, in
// order, the last group's text included ("a[1-2]b[3]c" gives a1b3c, a2b3c).
void for_each_prefix(const Pattern& pattern, const Visitor& visit) {
  std::span<const Segment> segments(pattern.segments);
  std::span<const Segment> earlier = segments.first(segments.size() - 1);
  std::vector<std::string> numbers(earlier.size());
  const std::string& last_text = segments.back().text;
  expand_prefixes(earlier, numbers, earlier.size(),
                  [&](std::string_view prefix) { visit(std::string(prefix) + last_text); });
}

void expand_pattern(const Pattern& pattern, const Visitor& visit) {
  if (pattern.segments.empty()) {
    visit(pattern.tail);  // a plain name prints as written
    return;
  }
  const std::vector<Range>& last = pattern.segments.back().ranges;
  for_each_prefix(pattern, [&](std::string_view prefix) {
    std::string name(prefix);
    for (const Range& range : last) {
      for_each_number(range, [&](std::uint64_t number) {
        name.resize(prefix.size());
        append_number(name, number, range.width);
        visit(name);
      });
    }
  });
}

[[noreturn]] void too_many_hosts(std::string_view expression) {
  throw util::InputError(fmt::format("hostlist '{}' names more than {} hosts; expected a smaller list",
                               expression, std::numeric_limits<std::size_t>::max()));
}

std::size_t checked_add(std::size_t a, std::size_t b, std::string_view expression) {
  std::size_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) too_many_hosts(expression);
  return sum;
}

std::size_t checked_multiply(std::size_t a, std::size_t b, std::string_view expression) {
  std::size_t product = 0;
  if (__builtin_mul_overflow(a, b, &product)) too_many_hosts(expression);
  return product;
}

std::size_t count_pattern(const Pattern& pattern, std::string_view expression) {
  std::size_t count = 1;
  for (const Segment& segment : pattern.segments) {
    std::size_t group = 0;
    for (const Range& range : segment.ranges) {
      std::size_t span = checked_add(range.high - range.low, 1, expression);
      group = checked_add(group, span, expression);
    }
    count = checked_multiply(count, group, expression);
  }
  return count;
}

// --- Compression -----------------------------------------------------------

// A run of consecutive numbers sharing a prefix, or one name without a
// trailing number (NUMBERED false), as Slurm keeps them while compressing.
struct HostRange {
  std::string prefix;
  std::uint64_t low = 0;
  std::uint64_t high = 0;
  std::size_t width = 0;
  bool numbered = false;
};

std::size_t digit_count(std::uint64_t number) { return std::to_string(number).size(); }

// Whether NUMBER prints the same padded to either width: "n9" (width 1) and
// "n10" (width 2) continue each other, "n9" and "n010" do not.
bool prints_same(std::uint64_t number, std::size_t width_a, std::size_t width_b) {
  std::size_t digits = digit_count(number);
  return width_a == width_b || (width_a <= digits && width_b <= digits);
}

// A plain name splits at its trailing digits, which keep their padding as
// the width ("n007" is n + 7 at width 3). Slurm clamps a number that does not
// fit in 64 bits; we keep such a name whole instead of renaming the host.
HostRange parse_host_name(std::string_view name) {
  std::size_t digits_at = name.size();
  while (digits_at > 0 && is_digit(name[digits_at - 1])) --digits_at;
  std::string_view digits = name.substr(digits_at);
  std::uint64_t value = 0;
  for (char c : digits) {
    auto digit = static_cast<std::uint64_t>(c - '0');
    if (value > (kMaxNumber - digit) / 10) return {std::string(name), 0, 0, 0, false};
    value = value * 10 + digit;
  }
  if (digits.empty()) return {std::string(name), 0, 0, 0, false};
  return {std::string(name.substr(0, digits_at)), value, value, digits.size(), true};
}

// The hostlist being compressed. Slurm only ever merges a new range into the
// last one (never sorts, never removes duplicates), so order is preserved.
class RangeList {
 public:
  void push(HostRange next) {
    if (!ranges_.empty() && extends(ranges_.back(), next)) {
      ranges_.back().high = next.high;
      return;
    }
    ranges_.push_back(std::move(next));
  }

  std::string ranged_string() const {
    std::string out;
    for (std::size_t i = 0; i < ranges_.size();) {
      std::size_t j = i + 1;
      while (j < ranges_.size() && shares_bracket(ranges_[i], ranges_[j])) ++j;
      if (i > 0) out += ',';
      append_group(out, i, j);
      i = j;
    }
    return out;
  }

 private:
  static bool extends(const HostRange& last, const HostRange& next) {
    return last.numbered && next.numbered && last.prefix == next.prefix &&
           last.high != kMaxNumber && last.high + 1 == next.low &&
           prints_same(next.low, last.width, next.width);
  }

  // Neighbouring numbered ranges with one prefix print in one bracket, even
  // when they overlap or differ in padding: "n[1-3,01,3]".
  static bool shares_bracket(const HostRange& a, const HostRange& b) {
    return a.numbered && b.numbered && a.prefix == b.prefix;
  }

  void append_group(std::string& out, std::size_t begin, std::size_t end) const {
    const HostRange& first = ranges_[begin];
    out += first.prefix;
    if (!first.numbered) return;
    bool single = end == begin + 1 && first.low == first.high;
    if (single) {
      append_number(out, first.low, first.width);
      return;
    }
    out += '[';
    for (std::size_t i = begin; i < end; ++i) {
      if (i > begin) out += ',';
      append_number(out, ranges_[i].low, ranges_[i].width);
      if (ranges_[i].high == ranges_[i].low) continue;
      out += '-';
      append_number(out, ranges_[i].high, ranges_[i].width);
    }
    out += ']';
  }

  std::vector<HostRange> ranges_;
};

// A plain name is split at its trailing digits. A bracketed name is pushed
// one range of its last group at a time, behind each prefix: Slurm compresses
// "a[1-2][3-4]" to "a1[3-4],a2[3-4]", not to "a[13-14,23-24]".
void push_pattern(RangeList& list, const Pattern& pattern) {
  if (pattern.segments.empty()) {
    list.push(parse_host_name(pattern.tail));
    return;
  }
  for_each_prefix(pattern, [&](std::string_view prefix) {
    for (const Range& range : pattern.segments.back().ranges)
      list.push({std::string(prefix), range.low, range.high, range.width, true});
  });
}

}  // namespace

void for_each_host(std::string_view expression,
                   const std::function<void(std::string_view)>& visit) {
  for (const Pattern& pattern : Parser(expression).parse()) expand_pattern(pattern, visit);
}

std::vector<std::string> expand_hostlist(std::string_view expression) {
  std::vector<std::string> hosts;
  for_each_host(expression, [&](std::string_view host) { hosts.emplace_back(host); });
  return hosts;
}

std::string compress_hostlist(const std::vector<std::string>& hosts) {
  RangeList list;
  for (const std::string& expression : hosts)
    for (const Pattern& pattern : Parser(expression).parse()) push_pattern(list, pattern);
  return list.ranged_string();
}

std::string first_host(std::string_view expression) {
  std::vector<Pattern> patterns = Parser(expression).parse();
  if (patterns.empty())
    throw util::InputError(
        fmt::format("hostlist '{}' names no hosts; expected at least one host name", expression));
  const Pattern& first = patterns.front();
  std::string host;
  for (const Segment& segment : first.segments) {
    host += segment.text;
    append_number(host, segment.ranges.front().low, segment.ranges.front().width);
  }
  return host + first.tail;
}

std::size_t count_hosts(std::string_view expression) {
  std::size_t count = 0;
  for (const Pattern& pattern : Parser(expression).parse())
    count = checked_add(count, count_pattern(pattern, expression), expression);
  return count;
}

}  // namespace dlaunch::slurm
