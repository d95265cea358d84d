// A derived value together with where it came from, so `dlaunch env` can
// say "4 (from SLURM_GPUS_ON_NODE)" and errors can name the culprit input.
#pragma once

#include <string>

namespace dlaunch::util {

template <typename T>
struct Sourced {
  T value{};
  std::string source;  // "--nproc-per-node", "SLURM_NODEID", "PET_NNODES", "default", ...
};

}  // namespace dlaunch::util
