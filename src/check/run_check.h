// The whole of `dlaunch check`, built into its own executable, dlaunch-check,
// so that gloo and the libraries it pulls in (ibverbs, hiredis, libnl) are
// loaded only by the check and never slow down `dlaunch run`'s start.
#pragma once

#include <string>
#include <vector>

namespace dlaunch::check {

// dlaunch check [--bench|--pairs] [options]: run as a worker under a launcher.
int run_check(const std::vector<std::string>& args);

}  // namespace dlaunch::check
