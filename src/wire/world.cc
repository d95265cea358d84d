#include "wire/world.h"

#include <algorithm>
#include <fmt/format.h>
#include <numeric>

#include "util/error.h"
#include "util/signal_names.h"

namespace dlaunch::rendezvous {

int World::world_size() const {
  return std::accumulate(nproc_per_node.begin(), nproc_per_node.end(), 0);
}

int World::rank_offset(int node_rank) const {
  DLAUNCH_ASSERT(node_rank >= 0 && node_rank < nnodes());
  return std::accumulate(nproc_per_node.begin(), nproc_per_node.begin() + node_rank, 0);
}

std::optional<int> World::node_rank_of(int slot) const {
  if (node_slots.empty()) {
    if (slot >= 0 && slot < nnodes()) return slot;
    return std::nullopt;
  }
  auto found = std::find(node_slots.begin(), node_slots.end(), slot);
  if (found == node_slots.end()) return std::nullopt;
  return static_cast<int>(found - node_slots.begin());
}

std::string describe_failure(const Failure& failure) {
  if (failure.global_rank < 0) return failure.description;
  std::string how = failure.signal != 0
                        ? fmt::format("was killed by {} (exit code {})", util::signal_name(failure.signal),
                                      failure.exit_code)
                        : fmt::format("exited with code {}", failure.exit_code);
  return fmt::format("rank {} (local rank {}) on {} (node {}) {}", failure.global_rank,
                     failure.local_rank, failure.host, failure.node_rank, how);
}

}  // namespace dlaunch::rendezvous
