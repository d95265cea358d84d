#include "rendezvous/local_coordinator.h"

#include "rendezvous/verdict.h"
#include "util/ports.h"

namespace dlaunch::rendezvous {

LocalCoordinator::LocalCoordinator(std::string master_addr, std::optional<int> worker_port,
                                   int nproc, std::string run_id, int max_restarts)
    : master_addr_(std::move(master_addr)),
      worker_port_(worker_port),
      nproc_(nproc),
      run_id_(std::move(run_id)),
      max_restarts_(max_restarts) {}

World LocalCoordinator::join(int round) {
  round_ = round;
  World world;
  world.round = round;
  world.nproc_per_node = {nproc_};
  world.node_slots = {0};
  world.worker_master_addr = master_addr_;
  world.run_id = run_id_;
  if (worker_port_) {
    util::ensure_port_free(master_addr_, *worker_port_);
    world.worker_master_port = *worker_port_;
  } else {
    world.worker_master_port = util::pick_free_port(master_addr_);
  }
  return world;
}

Verdict LocalCoordinator::finish(const NodeOutcome& outcome) {
  return decide_verdict(outcome, round_, max_restarts_);
}

}  // namespace dlaunch::rendezvous
