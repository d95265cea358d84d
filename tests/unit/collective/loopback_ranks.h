// Ranks of a gloo group as threads of the test process, over loopback.
#pragma once

#include <future>
#include <string>
#include <type_traits>
#include <vector>

#include "collective/worker_identity.h"
#include "util/ports.h"

namespace dlaunch::collective {

// Rank RANK of SIZE, its store on 127.0.0.1:PORT; IFNAME as GLOO_SOCKET_IFNAME.
inline WorkerIdentity loopback_rank(int rank, int size, int port, const std::string& ifname = "") {
  WorkerIdentity identity;
  identity.rank = rank;
  identity.world_size = size;
  identity.host = "127.0.0.1";
  identity.master_addr = "127.0.0.1";
  identity.master_port = port;
  identity.socket_ifname = ifname;
  return identity;
}

// Runs RANK_BODY(identity) for ranks 0..STARTED-1 of a group of SIZE, each in
// its own thread, and returns what each returned, in rank order. STARTED
// below SIZE leaves the last ranks out (a rank that never comes).
template <typename RankBody>
auto run_loopback_ranks(int size, int started, RankBody rank_body, const std::string& ifname = "") {
  using Result = std::invoke_result_t<RankBody, WorkerIdentity>;
  int port = util::pick_free_port("127.0.0.1");
  std::vector<std::future<Result>> ranks;
  for (int rank = 0; rank < started; ++rank)
    ranks.push_back(std::async(std::launch::async, [=] { return rank_body(loopback_rank(rank, size, port, ifname)); }));
  std::vector<Result> results;
  for (auto& rank : ranks) results.push_back(rank.get());
  return results;
}

}  // namespace dlaunch::collective
