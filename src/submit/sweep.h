// `dlaunch submit --sweep NAME=V1,V2 ...`: a hyperparameter sweep as one
// Slurm job array over the cartesian product of the values.
//
// Pure: the --sweep texts in, the tasks (their values and the arguments
// appended to the program's) out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace dlaunch::submit {

// The most tasks one array may have here: Slurm's default MaxArraySize is
// 1001, and every task gets a folder before sbatch answers, so a typo that
// multiplies the product should fail here, not after 10^6 mkdirs.
inline constexpr std::int64_t kMaxArrayTasks = 10000;

// One --sweep: NAME and its values, in the order given.
struct SweepAxis {
  std::string name;
  std::vector<std::string> values;
};

// One task of the array: its index (SLURM_ARRAY_TASK_ID), its values as
// NAME, VALUE pairs in --sweep order (empty for a raw --array), and the
// words appended to the program's arguments ("--lr=0.1").
struct SweepTask {
  std::int64_t index = 0;
  std::vector<std::pair<std::string, std::string>> values;
  std::vector<std::string> args;
};

// Parses TEXT ("lr=0.1,0.01") given by SOURCE ("--sweep", "dlaunch.toml:4
// [defaults]"). Spaces around each value are dropped. Throws InputError
// naming TEXT and SOURCE when there is no '=', NAME is not
// [A-Za-z_][A-Za-z0-9_-]*, a value is empty, or a value is given twice;
// and, with the comma form to give instead, when the values are separated
// by ';' ("lr=1e-3;1e-4") or a value is numbers separated by spaces
// ("lr=0.1 0.01", quoted), which would each be one value, or the values are
// a bracketed list ("lr=[0.1,0.01]"), which the commas would cut apart.
SweepAxis parse_sweep_axis(const std::string& text, const std::string& source);

// Every --sweep of TEXTS. Throws InputError as parse_sweep_axis does, for a
// NAME given twice, and for a product over kMaxArrayTasks tasks.
std::vector<SweepAxis> parse_sweep(const std::vector<std::string>& texts, const std::string& source);

// Throws UsageError when COMMAND (PROGRAM [ARGS...]) of a submission with
// the --sweep texts SWEEPS starts with a number: `--sweep lr=0.1 0.01
// train.py` (a space for a comma) makes the shell pass "0.01" as a word of
// its own, which would become the program. No program is named "0.01" (nor
// ","), so this is certain; the message gives the comma form. Does nothing
// without SWEEPS.
void refuse_split_sweep(const std::vector<std::string>& sweeps, const std::vector<std::string>& command);

// The cartesian product, the last axis varying fastest (as Python's
// itertools.product): lr=0.1,0.01 x bs=32,64 gives (0.1, 32), (0.1, 64),
// (0.01, 32), (0.01, 64) as tasks 0 to 3.
std::vector<SweepTask> sweep_tasks(const std::vector<SweepAxis>& axes);

// "lr=0.1 bs=32": a task's values as its lines name it; "" without values.
std::string describe_values(const SweepTask& task);

}  // namespace dlaunch::submit
