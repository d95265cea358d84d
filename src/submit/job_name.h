// The name a job gets when --job-name is not given: the script or module
// the command runs, not its last argument.
//
// `python3 -m mypkg.train --epochs 3` is the job `mypkg.train`, not `3`;
// `train.py --cfg 'x y'` is `train`. Interpreters and wrappers in front of
// the program (python3, env, torchrun, bash, ...) are skipped with their
// options and their options' values. Pure: tested on many command shapes.
#pragma once

#include <string>
#include <vector>

namespace dlaunch::submit {

// The most characters a derived job name keeps: squeue's and sacct's
// columns stay readable, and Slurm takes it as it is.
inline constexpr std::size_t kMaxDerivedJobNameLength = 64;

// The name when nothing else is found (an empty command, `python3 -c ...`
// names its interpreter instead).
inline constexpr const char* kFallbackJobName = "dlaunch";

// COMMAND's job name: the module after `-m`; else the file name of the
// first word that is no interpreter or wrapper, without a .py or .sh
// ending; as a name Slurm and a shell take as one word (sanitized_job_name).
std::string derived_job_name(const std::vector<std::string>& command);

// TEXT as a job name of letters, digits and . _ + - only (every other byte,
// spaces and control characters included, becomes '_'), at most
// kMaxDerivedJobNameLength long; kFallbackJobName when nothing is left.
std::string sanitized_job_name(const std::string& text);

}  // namespace dlaunch::submit
