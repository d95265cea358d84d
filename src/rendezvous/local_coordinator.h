// The coordinator of a single-node job: no peers, no network.
#pragma once

#include <optional>

#include "rendezvous/coordinator.h"

namespace dlaunch::rendezvous {

class LocalCoordinator : public Coordinator {
 public:
  // WORKER_PORT: MASTER_PORT for the workers; nullopt picks a free port on
  // MASTER_ADDR each round.
  LocalCoordinator(std::string master_addr, std::optional<int> worker_port, int nproc,
                   std::string run_id, int max_restarts);

  World join(int round) override;
  int event_fd() const override { return -1; }
  std::optional<std::string> poll_stop_request() override { return std::nullopt; }
  void announce_failure(const Failure&) override {}
  Verdict finish(const NodeOutcome& outcome) override;

 private:
  std::string master_addr_;
  std::optional<int> worker_port_;
  int nproc_;
  std::string run_id_;
  int max_restarts_;
  int round_ = 0;
};

}  // namespace dlaunch::rendezvous
