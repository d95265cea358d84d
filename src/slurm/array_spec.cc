#include "slurm/array_spec.h"

#include <algorithm>
#include <fmt/format.h>

#include "util/error.h"
#include "util/strings.h"

namespace dlaunch::slurm {
namespace {

constexpr const char* kGrammar =
    "sbatch's --array takes a comma list of N, N-M or N-M:STEP (indices 0 to 4000000), "
    "optionally followed by %MAX_RUNNING, e.g. --array=0-15:4%2";

[[noreturn]] void refuse(std::string_view what, const std::string& why) {
  throw util::InputError(fmt::format("{}: {}. {}", what, why, kGrammar));
}

// The number TEXT (digits only; any longer than 7 is above every bound).
std::optional<std::int64_t> number(std::string_view text) {
  if (text.empty() || text.size() > 7) return std::nullopt;
  if (!std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  return util::parse_int(text);
}

std::int64_t index(std::string_view text, std::string_view item, std::string_view what) {
  auto value = number(text);
  if (!value) refuse(what, fmt::format("'{}' is not an index or a range", item));
  if (*value > kMaxArrayIndex)
    refuse(what, fmt::format("index {} in '{}' is above {}, Slurm's largest", *value, item, kMaxArrayIndex));
  return *value;
}

// ITEM: "N", "N-M" or "N-M:STEP".
ArrayRange parse_item(std::string_view item, std::string_view what) {
  if (item.empty()) refuse(what, "an item of the list is empty");
  ArrayRange range;
  std::size_t dash = item.find('-');
  if (dash == std::string_view::npos) {
    range.first = range.last = index(item, item, what);
    return range;
  }
  std::string_view rest = item.substr(dash + 1);
  std::size_t colon = rest.find(':');
  range.first = index(item.substr(0, dash), item, what);
  range.last = index(rest.substr(0, colon), item, what);
  if (colon != std::string_view::npos) {
    auto step = number(rest.substr(colon + 1));
    if (!step || *step == 0) refuse(what, fmt::format("the step of '{}' must be a whole number from 1", item));
    range.step = *step;
  }
  if (range.last < range.first)
    refuse(what, fmt::format("the range '{}' ends below its start", item));
  return range;
}

}  // namespace

std::int64_t ArraySpec::named_count() const {
  std::int64_t count = 0;
  for (const auto& range : ranges) count += range.count();
  return count;
}

std::vector<std::int64_t> ArraySpec::task_ids() const {
  std::vector<std::int64_t> ids;
  ids.reserve(static_cast<std::size_t>(named_count()));
  for (const auto& range : ranges) {
    for (std::int64_t id = range.first; id <= range.last; id += range.step) ids.push_back(id);
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

ArraySpec parse_array_spec(std::string_view spec, std::string_view what) {
  if (spec.empty()) refuse(what, "the spec is empty");
  ArraySpec parsed;
  std::string_view list = spec;
  if (std::size_t percent = spec.find('%'); percent != std::string_view::npos) {
    list = spec.substr(0, percent);
    auto limit = number(spec.substr(percent + 1));
    if (!limit || *limit == 0)
      refuse(what, fmt::format("'%{}' must give the most tasks to run at once, a whole number from 1",
                               spec.substr(percent + 1)));
    parsed.max_parallel = static_cast<int>(*limit);
  }
  for (const std::string& item : util::split(std::string(list), ','))
    parsed.ranges.push_back(parse_item(item, what));
  return parsed;
}

}  // namespace dlaunch::slurm
