// Where `dlaunch run` was started, checked before anything waits: the
// places where the job it describes cannot form are refused at once, with
// the command to run instead, rather than found out by a rendezvous that
// waits for launchers that never come. `dlaunch run` and `dlaunch env`
// both reach this check through resolve_launch_config().
#pragma once

#include "launch/run_options.h"
#include "util/environment.h"

namespace dlaunch::launch {

struct Topology;

// The most launchers (nnodes + spare nodes) one job takes. Node 0 sends
// every launcher the whole World in one message of at most 1 MiB
// (wire/protocol.h), each launcher's address, interface and interface
// address in it: about 64 bytes a launcher leaves room for IPv6 addresses
// at 16,384. That is above the largest single jobs run today (about 10,000
// nodes), and far below what a typo such as --spare-nodes 1000000 asks for.
inline constexpr int kMostLaunchers = 16'384;

// Throws InputError (exit code 2), naming the variable or flag, its value,
// what was expected and the command to run instead, when:
//   - a Slurm job of several nodes runs this outside any srun step (the
//     batch script, an salloc shell) and no --nnodes, --node-rank,
//     --master-addr, --rdzv-endpoint or --standalone says the user placed
//     the launchers by hand;
//   - an srun step runs more than one task on a node;
//   - in an srun step, the launchers (nnodes + spare nodes) are not the
//     step's nodes, or --node-rank is not the node's SLURM_NODEID;
//   - a job of several launchers meets on a loopback address while its
//     hosts are known to differ (a Slurm step's nodes, SkyPilot's IPs);
//   - the launchers are more than kMostLaunchers.
void check_launch_site(const RunOptions& options, const Topology& topology, const util::Environment& environment);

}  // namespace dlaunch::launch
