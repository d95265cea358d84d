// Which host every rank runs on, learnt through the group itself.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "collective/communicator.h"

namespace dlaunch::check {

struct GroupLayout {
  std::vector<std::string> host_of_rank;
  std::vector<std::string> hosts;  // distinct, in order of their lowest rank
  std::map<std::string, int> ranks_per_host;
  std::map<std::string, int> first_rank_of_host;
};

// Every rank learns every rank's host name (an all-reduce of the names,
// each rank filling its own slot, so no separate all-gather is needed).
GroupLayout gather_layout(collective::Communicator& communicator, const std::string& host);

// "node1=2, node2=2".
std::string describe_ranks_per_host(const GroupLayout& layout);

}  // namespace dlaunch::check
