// sbatch's job array grammar (--array=SPEC), which scontrol also uses for
// the array tasks still pending in one record (ArrayTaskId=4-7%2).
//
// SPEC is a comma list of N, N-M or N-M:STEP, optionally followed by %P (at
// most P tasks run at once): "0-3", "1,3,5-7", "0-15:4%2". Indices go from 0
// to kMaxArrayIndex (Slurm's largest MaxArraySize is 4000001).
//
// Why hand-written: sbatch would check the spec only when it submits, and
// dlaunch must know the task indices before that, to make one folder per
// task. Where we are stricter than sbatch 22.05 (all inputs one should not
// guess about): sbatch's strtol skips spaces and takes '+' and brackets
// ("[0-3]"); here a spec is digits, ',', '-', ':' and one '%' only, and an
// empty item ("0,,1") is refused.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dlaunch::slurm {

inline constexpr std::int64_t kMaxArrayIndex = 4000000;

// FIRST, FIRST+STEP, ... up to LAST.
struct ArrayRange {
  std::int64_t first = 0;
  std::int64_t last = 0;
  std::int64_t step = 1;

  std::int64_t count() const { return (last - first) / step + 1; }
};

struct ArraySpec {
  std::vector<ArrayRange> ranges;      // in the order written
  std::optional<int> max_parallel;     // %P

  // The indices the ranges name, duplicates counted ("0-3,2" is 5).
  std::int64_t named_count() const;
  // The distinct indices, in increasing order. Expands named_count()
  // indices: callers bound that first.
  std::vector<std::int64_t> task_ids() const;
};

// Parses SPEC. Throws InputError naming WHAT ("--array '0-3x' (from
// --sbatch-arg)") and the item that does not parse, with the grammar and an
// example, for anything outside it: an empty spec or item, a range whose
// end is below its start, a step or %P of 0, an index above kMaxArrayIndex.
ArraySpec parse_array_spec(std::string_view spec, std::string_view what);

}  // namespace dlaunch::slurm
