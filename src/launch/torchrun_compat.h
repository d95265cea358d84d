// torchrun's options that dlaunch cannot take as they are: what it
// refuses (what torchrun refuses too, or what cannot work), what it
// translates (--log-line-prefix-template), and what it says once that it
// ignores, and why. Options it honours in full are plain run options.
#pragma once

#include <string>
#include <vector>

#include "launch/run_options.h"

namespace dlaunch::launch {

// Throws UsageError or InputError, naming the option, for a combination
// of OPTIONS that torchrun refuses or that cannot work (--start-method
// thread, --standalone with --nnodes 2, --prefix with
// --log-line-prefix-template).
void check_torchrun_options(const RunOptions& options);

// One line for each torchrun option in OPTIONS that dlaunch takes but does
// not act on, saying why ("--rdzv-backend etcd is ignored: ...").
std::vector<std::string> torchrun_ignored_notices(const RunOptions& options);

// torchrun's --log-line-prefix-template as a --prefix template: ${rank},
// ${local_rank} and ${role_name} as torchrun has them, ${hostname} (and
// $name without braces, $$ for a dollar, as Python's string.Template).
// Throws InputError naming an unknown field and the known ones.
std::string prefix_from_torchrun_template(const Setting& setting);

}  // namespace dlaunch::launch
