// array_spec_fuzz: sbatch's --array grammar (slurm/array_spec.h) on any text.
//
// Checks that the only failure is InputError; that a text holding anything
// but digits, ',', '-', ':' and '%' is refused; that an accepted spec names
// at least one index, its ranges in bounds (first <= last <= kMaxArrayIndex,
// step >= 1) and %P >= 1; and, for specs of at most 10000 named indices (the
// most dlaunch submit takes), that the task ids are strictly increasing,
// each in one of the ranges, and that writing them back as a comma list
// (with the same %P) parses to the same ids.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "slurm/array_spec.h"
#include "util/error.h"

namespace {

using namespace dlaunch;

constexpr std::int64_t kMaxExpanded = 10000;

void check(bool condition, const char* what, std::string_view input) {
  if (condition) return;
  std::fprintf(stderr, "array_spec_fuzz: invariant broken: %s\ninput: '%.*s'\n", what,
               static_cast<int>(input.size()), input.data());
  std::abort();
}

bool in_grammar_alphabet(std::string_view input) {
  return std::all_of(input.begin(), input.end(), [](char c) {
    return (c >= '0' && c <= '9') || c == ',' || c == '-' || c == ':' || c == '%';
  });
}

bool in_some_range(const slurm::ArraySpec& spec, std::int64_t id) {
  return std::any_of(spec.ranges.begin(), spec.ranges.end(), [&](const slurm::ArrayRange& range) {
    return id >= range.first && id <= range.last && (id - range.first) % range.step == 0;
  });
}

std::string comma_list(const std::vector<std::int64_t>& ids) {
  std::string text;
  for (std::int64_t id : ids) {
    if (!text.empty()) text += ',';
    text += std::to_string(id);
  }
  return text;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  slurm::ArraySpec spec;
  try {
    spec = slurm::parse_array_spec(input, "fuzz");
  } catch (const util::InputError&) {
    return 0;
  }
  check(in_grammar_alphabet(input), "a character outside the grammar was accepted", input);
  check(!spec.ranges.empty(), "an accepted spec has no range", input);
  for (const slurm::ArrayRange& range : spec.ranges) {
    check(range.first >= 0 && range.first <= range.last && range.last <= slurm::kMaxArrayIndex,
          "a range out of bounds", input);
    check(range.step >= 1, "a step below 1", input);
  }
  check(!spec.max_parallel || *spec.max_parallel >= 1, "a %P below 1", input);
  check(spec.named_count() >= 1, "an accepted spec names no index", input);
  if (spec.named_count() > kMaxExpanded) return 0;

  std::vector<std::int64_t> ids = spec.task_ids();
  check(!ids.empty() && static_cast<std::int64_t>(ids.size()) <= spec.named_count(),
        "task_ids() does not match named_count()", input);
  check(std::adjacent_find(ids.begin(), ids.end(), [](auto a, auto b) { return a >= b; }) == ids.end(),
        "task ids are not strictly increasing", input);
  for (std::int64_t id : ids) check(in_some_range(spec, id), "a task id in none of the ranges", input);

  std::string written = comma_list(ids);
  if (spec.max_parallel) written += '%' + std::to_string(*spec.max_parallel);
  slurm::ArraySpec again = slurm::parse_array_spec(written, "fuzz, written back");
  check(again.task_ids() == ids, "the ids written back parse to other ids", input);
  check(again.max_parallel == spec.max_parallel, "the %P written back parses to another", input);
  return 0;
}
