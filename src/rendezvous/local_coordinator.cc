#include "rendezvous/local_coordinator.h"

#include <algorithm>
#include <fmt/format.h>

#include "forensics/saved_report.h"
#include "service/verdict.h"
#include "util/console.h"
#include "util/ports.h"

namespace dlaunch::rendezvous {

LocalCoordinator::LocalCoordinator(std::string master_addr, std::optional<int> worker_port,
                                   int nproc, std::string run_id, int max_restarts,
                                   ForensicsSettings forensics, bool stop_repeated_failures)
    : master_addr_(std::move(master_addr)),
      worker_port_(worker_port),
      nproc_(nproc),
      run_id_(std::move(run_id)),
      max_restarts_(max_restarts),
      forensics_(std::move(forensics)),
      stop_repeated_failures_(stop_repeated_failures) {}

World LocalCoordinator::join(int round) {
  round_ = round;
  round_start_ = util::Clock::now();
  top_step_.reset();
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

void LocalCoordinator::watch_progress(const ProgressSource* source) {
  // The round's last word on steps, before the supervisor's tracker goes:
  // the repeated-failure rule weighs them in finish().
  if (source == nullptr && progress_ != nullptr) top_step_ = highest_step(progress_->steps());
  progress_ = source;
  if (source == nullptr) return;
  auto now = util::Clock::now();
  watch_.emplace(forensics_.hang, 1, now);
  hang_headline_.clear();
  capture_.reset();
  stop_reason_.reset();
  hang_failure_.reset();
  if (forensics_.hang.straggler_lag > 0) next_straggler_check_ = now + kStragglerCheckInterval;
  hang_check_ = watch_->due();
}

void LocalCoordinator::refresh(util::Clock::time_point now) {
  if (!watch_ || progress_ == nullptr) return;
  watch_->update(0, "", progress_->last_progress(), progress_->steps());
  if (next_straggler_check_ && now >= *next_straggler_check_) {
    next_straggler_check_ = now + kStragglerCheckInterval;
    if (auto news = watch_->straggler_news()) log(*news);
  }
}

std::optional<util::Clock::time_point> LocalCoordinator::next_deadline() const {
  if (!watch_ || progress_ == nullptr || capture_) return std::nullopt;
  if (!hang_check_) return next_straggler_check_;
  return next_straggler_check_ ? std::min(*hang_check_, *next_straggler_check_) : hang_check_;
}

std::optional<std::string> LocalCoordinator::poll_stop_request() {
  return std::exchange(stop_reason_, std::nullopt);
}

std::optional<CaptureRequest> LocalCoordinator::poll_capture_request() {
  auto now = util::Clock::now();
  refresh(now);
  if (!watch_ || !watch_->hung(now)) {
    if (watch_) hang_check_ = watch_->due();
    return std::nullopt;
  }
  hang_check_.reset();
  hang_headline_ = watch_->declare(now);
  log(fmt::format("hang: {}: capturing every worker's stack before the job is stopped", hang_headline_));
  capture_ = CaptureRequest{1, true};
  return capture_;
}

void LocalCoordinator::deliver_stacks(const CaptureRequest& request,
                                      const std::vector<forensics::WorkerStacks>& stacks) {
  if (!capture_ || capture_->id != request.id) return;
  capture_.reset();
  auto saved = forensics::save_report(stacks, "hang: " + hang_headline_, forensics_.report_folder,
                                      fmt::format("hang_attempt_{}", round_));
  for (const auto& line : saved.lines) log(line);
  hang_failure_ = hang_failure(hang_headline_, saved.summary, saved.text_path);
  stop_reason_ = hang_failure_->description;
}

Verdict LocalCoordinator::finish(const NodeOutcome& outcome) {
  progress_ = nullptr;
  watch_.reset();
  next_straggler_check_.reset();
  hang_check_.reset();
  NodeOutcome judged = outcome;
  // The workers were stopped for the hang: that is the failure, not their signals.
  if (hang_failure_ && !judged.failure) judged.failure = hang_failure_;
  RoundEnd end{{judged}, judged.failure, false, round_, max_restarts_};
  double seconds = std::chrono::duration<double>(util::Clock::now() - round_start_).count();
  if (stop_repeated_failures_ && !judged.succeeded) end.repeated = repeats_.judge(judged.failure, round_, seconds, top_step_);
  return decide_verdict(end);
}

void LocalCoordinator::log(const std::string& line) const {
  if (forensics_.log) forensics_.log(line);
  else util::console_err().write_message("dlaunch: " + line + "\n");
}

}  // namespace dlaunch::rendezvous
