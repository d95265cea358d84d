// The JOB argument and --output-dir that status, logs and cancel share:
// the same words, the same help, the same lookup.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "jobs/job_lookup.h"

namespace dlaunch::cli {

// JOB (required) and --output-dir, in the "Where" heading.
void add_job_argument(CLI::App& app, std::string& job, std::string& output_dir);

// --output-dir alone (dlaunch jobs).
void add_output_dir_option(CLI::App& app, std::string& output_dir);

// The submission JOB names, looked for in OUTPUT_DIR ("": the default places).
jobs::FoundJob find_job_argument(const std::string& job, const std::string& output_dir);

// The folders submissions are looked for in, for OUTPUT_DIR ("": the default
// places). An OUTPUT_DIR that does not exist is refused as a typo (UsageError)
// when MISSING_IS_A_TYPO: not for a Slurm job id, which Slurm may know.
std::vector<std::string> submission_dirs_for(const std::string& output_dir, bool missing_is_a_typo = true);

}  // namespace dlaunch::cli
