#include "check/run_check.h"

#include "check/bandwidth_sweep.h"
#include "check/check_options.h"
#include "check/correctness_check.h"
#include "check/gate_check.h"
#include "check/group_layout.h"
#include "check/pair_bandwidth.h"
#include "collective/worker_identity.h"
#include "util/open_file_limit.h"

namespace dlaunch::check {

namespace {

// gloo's full mesh holds a socket to every other rank: the gate of 1024
// nodes, or the check of 128 nodes of 8 GPUs, passes the soft limit of 1024
// open files that many distributions start processes with. The hard limit
// is usually far higher; this short-lived process takes it.
constexpr std::size_t kMostOpenFiles = std::size_t{1} << 20;

}  // namespace

int run_check(const std::vector<std::string>& args) {
  auto options = parse_check_options(args);
  if (!options) return 0;  // --help
  util::raise_open_file_limit(kMostOpenFiles);
  // The gate reads its identity and forms its group itself: whatever fails,
  // it still prints its one line for the launcher.
  if (options->gate) return run_gate(*options);
  // Who this worker is, from the launcher's (or srun's) variables.
  auto identity = collective::read_worker_identity(util::Environment::from_process());
  // The group: rank 0 hosts the store on MASTER_PORT, gloo connects a full mesh.
  auto communicator = collective::connect_gloo(identity, options->timeout);
  if (options->bench) {
    auto layout = gather_layout(*communicator, identity.host);
    return run_bandwidth_sweep(*communicator, *options, static_cast<int>(layout.hosts.size()));
  }
  if (options->pairs) {
    auto layout = gather_layout(*communicator, identity.host);
    return run_pair_bandwidth(*communicator, *options, layout);
  }
  return run_correctness_check(*communicator, identity, *options);
}

}  // namespace dlaunch::check
