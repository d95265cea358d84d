#include "hang/stack_collection.h"

#include <fmt/format.h>

#include "util/error.h"

namespace dlaunch::rendezvous {

StackCollection::StackCollection(std::uint32_t id, bool hang, std::string headline,
                                 std::map<int, AskedNode> asked, util::Clock::time_point deadline)
    : id_(id),
      hang_(hang),
      headline_(std::move(headline)),
      asked_(std::move(asked)),
      deadline_(deadline),
      started_(util::Clock::now()) {}

bool StackCollection::take(int node_rank, std::string_view stacks) {
  auto node = asked_.find(node_rank);
  if (node == asked_.end() || answered_.count(node_rank) > 0) return false;
  std::vector<forensics::WorkerStacks> workers;
  try {
    for (auto& worker : forensics::decode_worker_stacks(stacks)) {
      bool its_own = worker.rank >= node->second.first_rank &&
                     worker.rank < node->second.first_rank + node->second.nproc;
      if (!its_own) continue;
      worker.node_rank = node_rank;
      worker.host = node->second.host;
      workers.push_back(std::move(worker));
    }
  } catch (const util::ProtocolError& error) {
    missing_why_[node_rank] = fmt::format("node {} ({}) sent unreadable stacks: {}", node_rank,
                                          node->second.host, error.what());
    workers.clear();
  }
  answered_[node_rank] = std::move(workers);
  return true;
}

void StackCollection::lose(int node_rank, const std::string& why) {
  if (asked_.count(node_rank) == 0 || answered_.count(node_rank) > 0) return;
  missing_why_[node_rank] = why;
  answered_[node_rank] = {};
}

std::map<int, std::vector<forensics::WorkerStacks>> StackCollection::workers_by_node() const {
  std::map<int, std::vector<forensics::WorkerStacks>> by_node;
  auto waited = std::chrono::duration<double>(util::Clock::now() - started_).count();
  for (const auto& [node_rank, node] : asked_) {
    std::vector<forensics::WorkerStacks>& workers = by_node[node_rank];
    auto answer = answered_.find(node_rank);
    if (answer != answered_.end()) workers = answer->second;
    // Every rank of the node is in the report, captured or not.
    for (int rank = node.first_rank; rank < node.first_rank + node.nproc; ++rank) {
      bool present = false;
      for (const auto& worker : workers) present |= worker.rank == rank;
      if (present) continue;
      forensics::WorkerStacks missing;
      missing.rank = rank;
      missing.local_rank = rank - node.first_rank;
      missing.node_rank = node_rank;
      missing.host = node.host;
      auto why = missing_why_.find(node_rank);
      if (why != missing_why_.end()) missing.problems.push_back(why->second);
      else if (answer == answered_.end())
        missing.problems.push_back(fmt::format("node {} ({}) sent no stacks within {:.1f} s", node_rank,
                                               node.host, waited));
      else missing.problems.push_back("its node sent no stack for it (the worker had exited)");
      workers.push_back(std::move(missing));
    }
  }
  return by_node;
}

std::vector<forensics::WorkerStacks> StackCollection::workers() const {
  std::vector<forensics::WorkerStacks> all;
  for (auto& [node_rank, workers] : workers_by_node()) all.insert(all.end(), workers.begin(), workers.end());
  return all;
}

}  // namespace dlaunch::rendezvous
