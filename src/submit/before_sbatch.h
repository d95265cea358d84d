// What dlaunch submit checks on this machine before sbatch (or srun) is
// called: a mistake found on the nodes costs the job its place in the queue.
//
// The dlaunch run command line every node gets is checked by the nodes' own
// code (launch/hand_off_check.h) in a stand-in of node 0's Slurm step; the
// --setup lines with `bash -n`; the program where this machine can tell
// (the shared file system): a path that is missing or not executable, and
// a Python script's syntax when the job's interpreter is here too.
#pragma once

#include <string>
#include <vector>

#include "submit/job_script.h"
#include "submit/submit_settings.h"

namespace dlaunch::submit {

// Checks REQUEST's node arguments (node_run_arguments) as node 0 of the
// job will read them, SRUN saying whether srun or sbatch comes next. Throws
// the nodes' UsageError or InputError, naming the submit setting or
// --run-arg an option came from (SETTINGS' sources).
void check_node_arguments(const JobRequest& request, const SubmitSettings& settings, bool srun);

// Checks the --setup LINES with `bash -n` (syntax only: nothing runs),
// bounded to a few seconds. Throws InputError with bash's words, naming
// SOURCE. No bash here: nothing is said (the batch host's bash will).
void check_setup_lines(const std::vector<std::string>& lines, const std::string& source);

// Checks COMMAND's program as far as this machine can tell: a path (with a
// '/') that is missing, or not executable and not a .py; a name not found in
// this PATH. A .py script that exists is compiled (no __pycache__ written,
// bounded time) by PYTHON when PYTHON is present here, and its SyntaxError
// refused. RUN_ARGS are the nodes' options (--no-python, -m change what
// PROGRAM is). Throws InputError.
void check_program_here(const std::vector<std::string>& command, const std::vector<std::string>& run_args,
                        const std::string& python);

// The interpreter the job's workers will run a .py with, as SETTINGS name
// it (a run-arg --python, else the python setting), else "python3".
std::string job_python(const SubmitSettings& settings);

}  // namespace dlaunch::submit
