// Checking the World node 0 sends against this launcher's own settings.
//
// The World decides how many workers this node starts, their ranks, their
// MASTER_ADDR/MASTER_PORT and the heartbeat; a launcher checks every field
// before any worker starts, so a World that does not fit (a bug, another
// job, a peer that is not node 0) is a clear protocol error instead of 200
// workers on a one-GPU node or an assertion.
#pragma once

#include <optional>
#include <string>

#include "wire/world.h"

namespace dlaunch::rendezvous {

// What this launcher knows the World must say.
struct WorldExpectation {
  int round = 0;        // the round joined: a World of a later one is a late spare's
  int nnodes = 1;       // the training size: a World may have fewer (--min-nodes), never more
  int spare_nodes = 0;  // slots run from 0 to nnodes + spare_nodes - 1
  int slot = 0;         // this launcher's (--node-rank)
  int nproc = 1;
  std::string run_id;
  bool allow_uneven = false;
  int min_nodes = 0;    // the fewest nodes a World may have (--min-nodes); 0: nnodes
};

// The most workers a node runs (dlaunch run --nproc-per-node's limit).
inline constexpr int kMostWorkersPerNode = 4096;

// Why WORLD cannot be this node's, as a sentence naming the field, its value
// and this node's; nullopt when it fits.
std::optional<std::string> world_mismatch(const World& world, const WorldExpectation& expected);

}  // namespace dlaunch::rendezvous
