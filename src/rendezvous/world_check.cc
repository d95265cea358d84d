#include "rendezvous/world_check.h"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>
#include <vector>

namespace dlaunch::rendezvous {
namespace {

constexpr int kLongestHostName = 255;
constexpr int kShortestHeartbeatMs = 50;
constexpr int kLongestHeartbeatMs = 7 * 24 * 3600 * 1000;

std::optional<std::string> address_problem(const std::string& address) {
  if (address.empty() || address.size() > kLongestHostName)
    return fmt::format("a worker MASTER_ADDR of {} bytes (expected 1 to {})", address.size(),
                       kLongestHostName);
  bool printable = std::all_of(address.begin(), address.end(), [](char c) {
    auto byte = static_cast<unsigned char>(c);
    return byte > ' ' && byte != 0x7f;
  });
  if (!printable) return std::string("a worker MASTER_ADDR with spaces or control characters");
  return std::nullopt;
}

std::optional<std::string> worker_counts_problem(const World& world, const WorldExpectation& expected) {
  if (auto rank = world.node_rank_of(expected.slot)) {
    int here = world.nproc_per_node[static_cast<std::size_t>(*rank)];
    if (here != expected.nproc)
      return fmt::format("{} workers for this node (node {}), which runs {} (--nproc-per-node)", here,
                         *rank, expected.nproc);
  }
  for (std::size_t rank = 0; rank < world.nproc_per_node.size(); ++rank) {
    int count = world.nproc_per_node[rank];
    if (count < 1 || count > kMostWorkersPerNode)
      return fmt::format("{} workers for node {} (expected 1 to {})", count, rank, kMostWorkersPerNode);
    if (count != expected.nproc && !expected.allow_uneven)
      return fmt::format("{} workers for node {} but {} for this node, without --allow-uneven", count,
                         rank, expected.nproc);
  }
  return std::nullopt;
}

// Every slot in range and named once; this launcher's among them.
std::optional<std::string> slots_problem(const World& world, const WorldExpectation& expected) {
  if (world.node_slots.size() != world.nproc_per_node.size())
    return fmt::format("{} launcher slots for {} nodes", world.node_slots.size(), world.nproc_per_node.size());
  const int launchers = expected.nnodes + expected.spare_nodes;
  std::vector<bool> seen(static_cast<std::size_t>(launchers), false);
  for (const auto* slots : {&world.node_slots, &world.spare_slots, &world.benched_slots}) {
    for (int slot : *slots) {
      if (slot < 0 || slot >= launchers)
        return fmt::format("launcher slot {}, but this job has slots 0 to {} (--nnodes {} and {} spare)",
                           slot, launchers - 1, expected.nnodes, expected.spare_nodes);
      if (seen[static_cast<std::size_t>(slot)]) return fmt::format("launcher slot {} twice", slot);
      seen[static_cast<std::size_t>(slot)] = true;
    }
  }
  if (expected.slot < 0 || expected.slot >= launchers || !seen[static_cast<std::size_t>(expected.slot)])
    return fmt::format("no place to this launcher (slot {})", expected.slot);
  if (world.addresses.size() > static_cast<std::size_t>(launchers))
    return fmt::format("{} launcher addresses for {} launchers", world.addresses.size(), launchers);
  for (const auto& address : world.addresses) {
    if (address.empty()) continue;
    if (auto problem = address_problem(address)) return fmt::format("a launcher address: {}", *problem);
  }
  if (world.ifnames.size() > static_cast<std::size_t>(launchers) ||
      world.ifaddresses.size() > static_cast<std::size_t>(launchers))
    return fmt::format("{} interface names and {} interface addresses for {} launchers", world.ifnames.size(),
                       world.ifaddresses.size(), launchers);
  for (const auto& ifname : world.ifnames) {
    // Goes into the workers' environment: a name as the kernel allows one.
    bool fits = ifname.size() < 16 && std::all_of(ifname.begin(), ifname.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == '@' || c == ':';
    });
    if (!fits) return fmt::format("an interface name '{}' that is not one", ifname.substr(0, 32));
  }
  for (const auto& address : world.ifaddresses) {
    if (address.empty()) continue;
    if (auto problem = address_problem(address)) return fmt::format("an interface address: {}", *problem);
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> world_mismatch(const World& world, const WorldExpectation& expected) {
  // A later round is a launcher that joins a running job late: it stands by.
  if (world.round < expected.round)
    return fmt::format("round {}, but this node joined round {}", world.round, expected.round);
  if (world.run_id != expected.run_id)
    return fmt::format("run id '{}', but this node's is '{}' (--rdzv-id)", world.run_id, expected.run_id);
  const int fewest = effective_min_nodes(expected.min_nodes, expected.nnodes);
  if (world.nnodes() < fewest || world.nnodes() > expected.nnodes)
    return fmt::format("{} nodes, but this node was started with {} (--nnodes){}", world.nnodes(),
                       expected.nnodes,
                       fewest < expected.nnodes ? fmt::format(" and {} (--min-nodes)", fewest) : "");
  if (auto problem = slots_problem(world, expected)) return problem;
  if (auto problem = worker_counts_problem(world, expected)) return problem;
  if (world.worker_master_port < 1 || world.worker_master_port > 65535)
    return fmt::format("worker MASTER_PORT {} (expected 1 to 65535)", world.worker_master_port);
  if (auto problem = address_problem(world.worker_master_addr)) return problem;
  if (world.heartbeat_timeout_ms < kShortestHeartbeatMs || world.heartbeat_timeout_ms > kLongestHeartbeatMs)
    return fmt::format("a heartbeat timeout of {} ms (expected {} ms to 7 days)",
                       world.heartbeat_timeout_ms, kShortestHeartbeatMs);
  return std::nullopt;
}

}  // namespace dlaunch::rendezvous
