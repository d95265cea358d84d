// `dlaunch check --pairs`: the bandwidth of every node-to-node link, to find
// the one bad node of many.
#pragma once

#include <string>
#include <vector>

#include "check/check_options.h"
#include "check/group_layout.h"
#include "collective/communicator.h"

namespace dlaunch::check {

struct PairMatrix {
  std::vector<std::string> hosts;
  std::vector<std::vector<double>> gbps;  // [from][to], 0 on the diagonal
};

struct PairVerdict {
  std::string slowest_from, slowest_to;
  double slowest_gbps = 0;
  std::string slowest_node;
  double slowest_node_gbps = 0;  // mean over the links it is part of
  double median_gbps = 0;
  // Its links run under half the speed of the links it is not part of.
  bool slowest_node_is_outlier = false;
};

// Finds the slowest link and the node whose links are slowest. Pure.
PairVerdict judge_pairs(const PairMatrix& matrix);

// Measures each ordered pair of nodes in turn (the lowest rank of each node
// sends, the other acknowledges), with every rank in step. Rank 0 prints the
// matrix with the slowest link and node flagged (or JSON). Returns 0.
int run_pair_bandwidth(collective::Communicator& communicator, const CheckOptions& options,
                       const GroupLayout& layout);

}  // namespace dlaunch::check
