#include "launch/world.h"

#include <numeric>

#include "util/error.h"

namespace dlaunch {

int World::world_size() const {
  return std::accumulate(nproc_per_node.begin(), nproc_per_node.end(), 0);
}

int World::rank_offset(int node_rank) const {
  DLAUNCH_ASSERT(node_rank >= 0 && node_rank < nnodes());
  return std::accumulate(nproc_per_node.begin(), nproc_per_node.begin() + node_rank, 0);
}

}  // namespace dlaunch
