// One stack capture across the job, as node 0's service gathers it: which
// nodes were asked, what each answered, and who is still waiting.
//
// A node that does not answer by the deadline, is lost meanwhile, or
// answers with something unreadable still has its ranks in the report,
// each saying why its stack is missing: the report is never silently short.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "forensics/stack_sample.h"
#include "util/socket.h"

namespace dlaunch::rendezvous {

// What node 0 knows of a node it asked: where it is and which ranks it runs.
struct AskedNode {
  std::string host;
  int first_rank = 0;
  int nproc = 0;
};

class StackCollection {
 public:
  StackCollection(std::uint32_t id, bool hang, std::string headline, std::map<int, AskedNode> asked,
                  util::Clock::time_point deadline);

  std::uint32_t id() const { return id_; }
  bool hang() const { return hang_; }
  const std::string& headline() const { return headline_; }
  util::Clock::time_point deadline() const { return deadline_; }

  // NODE_RANK's answer (forensics::encode_worker_stacks). Its ranks must
  // be the node's own: others are dropped, so a node cannot speak for
  // another. Returns false when it was not asked or already answered.
  bool take(int node_rank, std::string_view stacks);
  // NODE_RANK is gone: its ranks say so.
  void lose(int node_rank, const std::string& why);
  bool complete() const { return answered_.size() == asked_.size(); }

  // Every asked rank's stacks, with a reason for each that is missing
  // ("node 2 (node3) sent no stacks within 12 s").
  std::vector<forensics::WorkerStacks> workers() const;
  // The same, one list per node (what an observer receives, a frame each).
  std::map<int, std::vector<forensics::WorkerStacks>> workers_by_node() const;

 private:
  std::uint32_t id_;
  bool hang_;
  std::string headline_;
  std::map<int, AskedNode> asked_;
  util::Clock::time_point deadline_;
  util::Clock::time_point started_;
  std::map<int, std::vector<forensics::WorkerStacks>> answered_;
  std::map<int, std::string> missing_why_;
};

}  // namespace dlaunch::rendezvous
