// Where `dlaunch run` gets the rendezvous secret from, and the checks on it.
#pragma once

#include <optional>
#include <string>

#include "launch/run_options.h"
#include "launch/launch_config.h"
#include "util/environment.h"

namespace dlaunch::launch {

// The variable `dlaunch submit` (and `dlaunch ssh`) set for every launcher.
inline constexpr const char* kTokenVariable = "DLAUNCH_RDZV_TOKEN";

// The token from --rdzv-token, --rdzv-token-file, $DLAUNCH_RDZV_TOKEN or,
// when opted in, derived from TOPOLOGY's run id and the Slurm job: in that
// order, and giving two of the explicit ones is an error. nullopt when none
// applies. Throws InputError for a token file that cannot be opened or read
// (saying why), is not a regular file (a directory, a FIFO, ...), is
// group/world-readable or longer than a secret's line; for an empty or short
// token; and for --rdzv-token-derive outside Slurm.
std::optional<util::Sourced<std::string>> resolve_rdzv_token(const RunOptions& options,
                                                       const util::Environment& environment,
                                                       const Topology& topology);

// The secret in PATH, with the checks of --rdzv-token-file (a regular
// file, readable by its owner only, one line). Throws InputError saying why not.
std::string read_rdzv_token_file(const std::string& path);

}  // namespace dlaunch::launch
