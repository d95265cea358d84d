// The coordinator of a single-node job: no peers, no network. It judges a
// hang itself (hang/hang_watch.h) from the supervisor's progress.
#pragma once

#include <optional>

#include "doctor/repeat_guard.h"
#include "rendezvous/coordinator.h"
#include "util/socket.h"

namespace dlaunch::rendezvous {

class LocalCoordinator : public Coordinator {
 public:
  // WORKER_PORT: MASTER_PORT for the workers; nullopt picks a free port on
  // MASTER_ADDR each round. STOP_REPEATED_FAILURES: end the job when a
  // failure repeats the previous attempt's (doctor/repeat_guard.h).
  LocalCoordinator(std::string master_addr, std::optional<int> worker_port, int nproc,
                   std::string run_id, int max_restarts, ForensicsSettings forensics = {},
                   bool stop_repeated_failures = true);

  World join(int round) override;
  int slot() const override { return 0; }
  int event_fd() const override { return -1; }
  std::optional<util::Clock::time_point> next_deadline() const override;
  std::optional<std::string> poll_stop_request() override;
  void announce_failure(const Failure&) override {}
  Verdict finish(const NodeOutcome& outcome) override;

  void watch_progress(const ProgressSource* source) override;
  std::optional<CaptureRequest> poll_capture_request() override;
  void deliver_stacks(const CaptureRequest& request, const std::vector<forensics::WorkerStacks>& stacks) override;

 private:
  void refresh(util::Clock::time_point now);
  void log(const std::string& line) const;

  std::string master_addr_;
  std::optional<int> worker_port_;
  int nproc_;
  std::string run_id_;
  int max_restarts_;
  ForensicsSettings forensics_;
  int round_ = 0;
  const ProgressSource* progress_ = nullptr;
  std::optional<HangWatch> watch_;
  std::optional<util::Clock::time_point> next_straggler_check_;
  // When to look for a hang next: the timeout after the last progress seen
  // then (a deadline that moved with every output line would re-arm the
  // supervisor's timer on every line).
  std::optional<util::Clock::time_point> hang_check_;
  std::string hang_headline_;
  std::optional<CaptureRequest> capture_;  // asked for, not yet delivered
  std::optional<std::string> stop_reason_;  // to give once
  std::optional<Failure> hang_failure_;
  bool stop_repeated_failures_;
  doctor::RepeatGuard repeats_;
  util::Clock::time_point round_start_{};
  std::optional<std::int64_t> top_step_;  // the round's highest step reported, for repeats_
};

}  // namespace dlaunch::rendezvous
