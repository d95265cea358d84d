// The values dlaunch submit writes into a job script, checked before they go.
//
// sbatch reads a job script line by line: its #SBATCH lines up to the first
// command, then bash runs the rest. A newline inside a job name would end
// that #SBATCH line and make the rest of the value a line of its own: a
// shell command that runs on the job's first node, after which sbatch reads
// no further #SBATCH line. So every value that reaches a #SBATCH line or the
// script's text is refused when it holds a control character: the C0
// controls (NUL to 0x1f) and DEL. That includes TAB, which quoting could
// carry: no Slurm name, time or option value has a use for one, Slurm's own
// tools print such values in whitespace-separated columns, and one rule
// ("printable text") is easier to state and to check than a list of
// exceptions. The values that reach only the srun line (program arguments,
// --run-arg and the other dlaunch run options) are shell-quoted there, where
// any byte, a newline too, is carried safely; they are not checked here.
#pragma once

#include <string>
#include <string_view>

#include "submit/submit_settings.h"

namespace dlaunch::submit {

// Whether the setting NAME is written into the job script's #SBATCH lines or
// its text: job-name, partition, account, qos, time, constraint, mem,
// sbatch-arg, output-dir, signal, setup, srun-arg, sweep, container-image
// and container-dlaunch.
bool reaches_script_text(std::string_view name);

// Throws InputError when VALUE holds a control character: the message names
// WHAT and SOURCE ("job-name (from --job-name)", "... (from
// dlaunch.toml:3 [defaults])"), the character and where it is, shows the
// value with the character escaped, and ends with REMEDY (by default: remove
// it from SOURCE).
void check_script_text(std::string_view what, std::string_view value, std::string_view source,
                       std::string_view remedy = {});

// check_script_text on VALUE (each item of a list) when the setting NAME
// reaches the script; an empty sbatch-arg or srun-arg is refused too
// (sbatch would read an empty argument as the end of its line, srun as the
// program). Used for every layer:
// dlaunch.toml when it is read (every profile, used or not) and the merged
// settings before a job request is made.
void check_script_setting(std::string_view name, const Value& value, std::string_view source);

}  // namespace dlaunch::submit
