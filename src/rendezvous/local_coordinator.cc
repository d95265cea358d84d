#include "rendezvous/local_coordinator.h"

#include "util/ports.h"

namespace dlaunch {

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
  world.worker_master_addr = master_addr_;
  world.run_id = run_id_;
  if (worker_port_) {
    ensure_port_free(master_addr_, *worker_port_);
    world.worker_master_port = *worker_port_;
  } else {
    world.worker_master_port = pick_free_port(master_addr_);
  }
  return world;
}

Verdict LocalCoordinator::finish(const NodeOutcome& outcome) {
  return decide_verdict(outcome, round_, max_restarts_);
}

Verdict decide_verdict(const NodeOutcome& outcome, int round, int max_restarts) {
  Verdict verdict;
  if (outcome.succeeded) return verdict;
  verdict.failure = outcome.failure;
  verdict.exit_code = outcome.failure ? outcome.failure->exit_code : 1;
  // A launcher told to stop by a signal ends the job, and after a
  // preemption warning the job is about to end; only worker failures restart it.
  bool restartable = outcome.stop_signal == 0 && !outcome.preempted && round < max_restarts;
  verdict.kind = restartable ? Verdict::Kind::kRestart : Verdict::Kind::kFailed;
  return verdict;
}

}  // namespace dlaunch
