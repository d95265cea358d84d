// The rules every command's options follow, whatever the command: checked
// on the words as typed (util/missing_value.h reads them), before CLI11
// parses them, so run, submit, ssh, env, check and the job commands answer
// a mistake the same way.
//
//   - A flag takes no value. CLI11 reads "--gate=no" as a flag given (on),
//     and "--standalone=false" as true: the opposite of what was meant.
//     "--gate=no" is refused, naming the flag and both ways to say it.
//   - An option that holds one value, given twice with different values
//     ("--nproc-per-node 4 --nproc-per-node 2"), is refused naming both:
//     which one was meant is a guess either way. Given twice with the
//     same value it is taken once. Options that collect a list
//     (--sbatch-arg, --setup, ...) may repeat.
#pragma once

#include <string_view>
#include <vector>

#include "util/missing_value.h"

namespace CLI {
class App;
}  // namespace CLI

namespace dlaunch::util {

// Throws UsageError, naming COMMAND, for the first flag in USES given a
// value.
void refuse_flag_values(const std::vector<OptionUse>& uses, std::string_view command);

// Throws UsageError, naming COMMAND and both spellings, for the first
// one-value option in USES given twice with different values.
void refuse_conflicting_repeats(const std::vector<OptionUse>& uses, std::string_view command);

// After refuse_conflicting_repeats: lets each one-value option of APP take
// a value given twice (the same both times) instead of CLI11's "At Most 1
// required".
void accept_identical_repeats(CLI::App& app);

}  // namespace dlaunch::util
