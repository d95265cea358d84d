// A Slurm job id as dlaunch hands it to scontrol, scancel and sacct.
//
// Ids come from places a hostile hand can reach: a submission folder's
// job_id file (a shared or copied folder), the command line, sbatch's
// output. A file reading "--user=root" must never reach scancel as an
// option (it would cancel every job of that user). Two guards, each enough
// alone: the id's syntax is checked before any command line is built, and
// the id goes after "--", which ends the options of scancel and scontrol
// (getopt_long; checked on Slurm 22.05: "scancel -- --user=root" says
// "Invalid job id --user=root"). sacct takes its ids as the value of
// --jobs=, where an id cannot be read as an option; there the syntax check
// is the guard.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace dlaunch::slurm {

// Whether TEXT is a job id as Slurm writes one: JOBID (1-10 digits, Slurm's
// ids are 32-bit), optionally followed by _TASK (an array task, up to 7
// digits: indices go to 4000000) or +COMPONENT (a heterogeneous job's part,
// up to 4 digits).
bool is_job_id(std::string_view text);

// TEXT when it is a job id; else throws InputError naming SOURCE ("FOLDER/
// job_id", "the JOB argument"), the text and the shape expected.
const std::string& checked_job_id(const std::string& text, std::string_view source);

// COMMAND (a Slurm tool and its options) followed by "--" and JOB_ID,
// checked (InputError when it is no job id): {"scancel", "--", "12"}.
std::vector<std::string> job_command(std::vector<std::string> command, const std::string& job_id);

}  // namespace dlaunch::slurm
