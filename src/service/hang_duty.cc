#include "service/hang_duty.h"

#include <fmt/format.h>

#include "forensics/saved_report.h"

namespace dlaunch::rendezvous {

HangDuty::HangDuty(ForensicsSettings settings, std::chrono::milliseconds heartbeat_timeout, HangDutyHost& host)
    : settings_(std::move(settings)), heartbeat_timeout_(heartbeat_timeout), host_(host) {}

void HangDuty::begin_round(int round, int nodes, util::Clock::time_point now) {
  round_ = round;
  hang_watch_.emplace(settings_.hang, nodes, now);
  next_straggler_check_ = now + kStragglerCheckInterval;
}

void HangDuty::end_round() { hang_watch_.reset(); }

void HangDuty::on_progress(int node_rank, const std::string& host, const World& world,
                           const ProgressMessage& message) {
  if (!hang_watch_ || static_cast<int>(message.round) != round_) return;
  // A node reports its own ranks only.
  int first = world.rank_offset(node_rank);
  int last = first + world.nproc_per_node[static_cast<std::size_t>(node_rank)];
  std::vector<RankStep> steps;
  for (const auto& step : message.steps) {
    if (step.rank >= first && step.rank < last) steps.push_back(step);
  }
  auto idle = std::chrono::milliseconds(message.idle_ms);
  hang_watch_->update(node_rank, host, util::Clock::now() - idle, std::move(steps));
}

void HangDuty::on_stacks(int node_rank, const StacksMessage& message) {
  if (!capture_ || message.id != capture_->id()) return;
  capture_->take(node_rank, message.stacks);
  if (capture_->complete()) finish_capture();
}

void HangDuty::node_gone(int node_rank, const std::string& why) {
  if (capture_) capture_->lose(node_rank, why);
}

void HangDuty::check(util::Clock::time_point now, bool watching) {
  if (capture_ && now >= capture_->deadline()) finish_capture();
  if (!watching || !hang_watch_) return;
  if (now >= next_straggler_check_) {
    next_straggler_check_ = now + kStragglerCheckInterval;
    if (auto news = hang_watch_->straggler_news()) {
      host_.log(*news);
      host_.add_to_timeline(*news);
    }
  }
  if (!capture_ && hang_watch_->hung(now)) {
    hang_headline_ = hang_watch_->declare(now);
    host_.log(fmt::format("hang: {}: capturing every worker's stack on every node before the job is stopped",
                          hang_headline_));
    host_.add_to_timeline("hang: " + hang_headline_);
    start_capture(true, "hang: " + hang_headline_);
  }
}

void HangDuty::observe(Peer& peer) {
  if (!capture_) start_capture(false, fmt::format("live capture of round {}, asked for by {}", round_, peer.host));
  if (capture_) observers_[&peer] = capture_->id();
  else host_.send(peer, MessageType::kStacksEnd, encode(TextMessage{static_cast<std::uint32_t>(round_), "nothing to capture"}));
}

void HangDuty::start_capture(bool hang, std::string headline) {
  auto nodes = host_.capture_nodes();
  std::map<int, AskedNode> asked;
  for (const auto& [rank, node] : nodes) asked[rank] = node.asked;
  // Two tools in turn per worker, each within the capture timeout, and a
  // heartbeat's delay either way.
  auto deadline = util::Clock::now() + 2 * settings_.capture_timeout + 2 * heartbeat_interval(heartbeat_timeout_) +
                  std::chrono::seconds(1);
  capture_.emplace(++capture_ids_, hang, std::move(headline), std::move(asked), deadline);
  for (const auto& [rank, node] : nodes) {
    if (!node.absent.empty()) capture_->lose(rank, node.absent);
  }
  host_.broadcast_to_members(MessageType::kCapture,
                             encode(CaptureMessage{static_cast<std::uint32_t>(round_), capture_->id(), hang}));
  if (capture_->complete()) finish_capture();
}

// Every node answered, or the deadline passed: a hang's report is saved
// and the job fails with it; an observer gets every node's stacks.
void HangDuty::finish_capture() {
  StackCollection done = std::move(*capture_);
  capture_.reset();
  if (done.hang()) {
    auto saved = forensics::save_report(done.workers(), done.headline(), settings_.report_folder,
                                        fmt::format("hang_attempt_{}", round_));
    for (const auto& line : saved.lines) host_.log(line);
    host_.fail_for_hang(hang_failure(hang_headline_, saved.summary, saved.text_path));
  }
  answer_observers(done);
}

void HangDuty::answer_observers(const StackCollection& done) {
  for (auto [peer, id] : std::map<Peer*, std::uint32_t>(observers_)) {
    if (id != done.id()) continue;
    for (const auto& [rank, workers] : done.workers_by_node())
      host_.send(*peer, MessageType::kStacks,
                 encode(StacksMessage{done.id(), forensics::encode_worker_stacks_within(workers, kMaxPayload - 4096)}));
    host_.send(*peer, MessageType::kStacksEnd, encode(TextMessage{static_cast<std::uint32_t>(round_), done.headline()}));
    observers_.erase(peer);
  }
}

}  // namespace dlaunch::rendezvous
