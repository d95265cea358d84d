#include "rendezvous/rendezvous_coordinator.h"

#include <algorithm>
#include <fmt/format.h>

#include "gate/gate_process.h"
#include "net/interfaces.h"
#include "process/link_wait.h"
#include "process/stall_watch.h"
#include "rendezvous/service_dialer.h"
#include "rendezvous/world_check.h"
#include "service/rendezvous_server.h"
#include "service/verdict.h"
#include "survey/probe_dialer.h"
#include "survey/probe_responder.h"
#include "util/console.h"
#include "util/duration_text.h"
#include "util/error.h"
#include "util/local_time.h"
#include "util/ports.h"
#include "util/socket.h"
#include "wire/protocol.h"
#include "wire/service_endpoint.h"
#include "wire/token.h"
#include "util/exit_codes.h"

namespace dlaunch::rendezvous {
namespace {

using rendezvous::Frame;
using rendezvous::heartbeat_interval;
using rendezvous::MessageType;
using std::chrono::milliseconds;

// Node 0 gets this long past the join deadline to answer before a node
// decides the service itself went silent.
constexpr std::chrono::seconds kAnswerMargin(10);
// A node that fails its preflight tries this long to tell the others.
constexpr std::chrono::seconds kPreflightReportLimit(60);
// After node 0 closed a link before the World, the pause before dialling
// again, so a node 0 that accepts and closes at once is not hammered.
constexpr milliseconds kRedialPause(100);
// While a send waits in the outbox, how often the supervisor lets it retry.
constexpr milliseconds kBacklogRetry(50);

// The link to node 0 failed: closed, silent, stalled, or it sent something
// malformed or unauthentic. Before the World a launcher dials again; after
// it, node 0 is lost.
class LinkLost : public util::SystemError {
 public:
  using util::SystemError::SystemError;
};

rendezvous::DialSettings dial_settings(const RendezvousSettings& settings) {
  rendezvous::DialSettings dial;
  dial.master_addr = settings.master_addr;
  dial.port = settings.port;
  dial.node_rank = settings.node_rank;
  dial.token = settings.job.token;
  dial.handshake_timeout = settings.job.handshake_timeout;
  dial.rendezvous_timeout = settings.job.join_timeout;
  dial.notice = settings.notice;
  dial.waiting_lines = settings.job.waiting_lines;
  return dial;
}

class RendezvousCoordinator : public Coordinator {
 public:
  RendezvousCoordinator(RendezvousSettings settings, process::SignalChannel& signals)
      : settings_(std::move(settings)),
        signals_(signals),
        dialer_(std::make_unique<ServiceDialer>(dial_settings(settings_), signals)),
        heartbeat_timeout_(settings_.job.heartbeat_timeout),
        stall_(process::stall_threshold(settings_.job.heartbeat_timeout)) {
    by_arrival_ = settings_.node_rank < 0;
    start_probe_responder();
    if (by_arrival_) serve_if_the_endpoint_is_here();
    else if (settings_.node_rank == 0) start_service(listen_for_service());
  }

  int slot() const override { return settings_.node_rank; }

  World join(int round) override {
    auto deadline = util::Clock::now() + settings_.job.join_timeout;
    bool joined = false;  // a take-over's dial carried the Join
    if (takeover_) joined = take_over(round, deadline);
    for (;;) {
      if (joined) joined = false;
      else if (link_) {
        link_->set_generation(static_cast<std::uint32_t>(round));
        send(MessageType::kJoin, rendezvous::encode(join_message(round, "")));
      } else {
        connect(round, "", deadline);
      }
      try {
        return await_world(round, deadline);
      } catch (const LinkLost& lost) {
        // Closed or failed before the World: node 0 may only have made
        // room, or restarted; dial again until the rendezvous deadline.
        dialer_->saw(lost.what());
        link_.reset();
        dialer_->wait_for_signal_until(std::min(deadline, util::Clock::now() + kRedialPause));
      }
    }
  }

  void report_preflight_failure(const std::string& problem) override {
    auto deadline = util::Clock::now() + std::min<milliseconds>(settings_.job.join_timeout, kPreflightReportLimit);
    try {
      if (!link_) connect(0, problem, deadline);
      else send(MessageType::kJoin, rendezvous::encode(join_message(0, problem)));
      if (service_) wait_until_all_told(util::Clock::now() + settings_.job.join_timeout);
      else wait_for_frame(deadline, "node 0's answer");
    } catch (const util::SystemError&) {
      // Best effort: the problem itself is what this node reports.
    } catch (const util::InputError&) {
    } catch (const util::Interrupted&) {
    }
  }

  void report_health(const std::optional<std::string>& problem) override { health_problem_ = problem; }

  // Reads node 0 (its frames wait in pending_ for join()), answers its
  // heartbeats and notes that this launcher runs (its stall watch). A
  // broken link is left for join() to meet, as if it broke then.
  void keep_alive() override {
    if (!link_ || lost_) return;
    try {
      const bool connected = link_->receive();
      while (auto frame = next_frame()) pending_.push_back(std::move(*frame));
      if (connected) keep_link();
    } catch (const rendezvous::ProtocolError& error) {
      mark_lost(malformed_message(error));
    } catch (const LinkLost& lost) {
      mark_lost(lost.what());
    }
  }

  int event_fd() const override { return link_ ? link_->fd() : -1; }

  std::optional<util::Clock::time_point> next_deadline() const override {
    if (!link_ || lost_) return std::nullopt;
    auto due = std::min(link_->last_sent() + heartbeat_interval(heartbeat_timeout_),
                        heard_since() + heartbeat_timeout_);
    if (reports_progress()) due = std::min(due, last_progress_sent_ + progress_interval());
    if (link_->has_backlog()) due = std::min(due, util::Clock::now() + kBacklogRetry);
    return due;
  }

  std::optional<std::string> poll_stop_request() override {
    wake();
    if (!link_ || lost_) return std::nullopt;
    try {
      bool connected = link_->receive();
      while (auto frame = next_frame()) {
        if (frame->type == MessageType::kStop || frame->type == MessageType::kAbort)
          return rendezvous::decode_text(frame->payload).reason;
        if (frame->type == MessageType::kCapture) {
          take_capture_request(rendezvous::decode_capture(frame->payload));
          continue;
        }
        pending_.push_back(std::move(*frame));
      }
      if (!connected) throw link_lost(NodeZeroLoss::kClosed, lost_message());
      keep_link();
    } catch (const rendezvous::ProtocolError& error) {
      return mark_lost(malformed_message(error));
    } catch (const LinkLost& lost) {
      // Fenced: the supervisor kills the workers at once (fenced()).
      if (auto fenced = left_behind(lost.what())) return mark_lost(*fenced);
      return mark_lost(lost.what());
    }
    return std::nullopt;
  }

  bool fenced() const override { return fenced_reason_.has_value(); }

  void workers_started() override {
    if (link_ && !lost_) send(MessageType::kStarted, "");
  }

  void watch_progress(const ProgressSource* source) override {
    progress_ = source;
    captures_.clear();
    // The first report goes out at once: node 0 counts from the round's start.
    last_progress_sent_ = util::Clock::time_point{};
  }

  std::optional<CaptureRequest> poll_capture_request() override {
    if (captures_.empty()) return std::nullopt;
    CaptureRequest request = captures_.front();
    captures_.erase(captures_.begin());
    return request;
  }

  void deliver_stacks(const CaptureRequest& request, const std::vector<forensics::WorkerStacks>& stacks) override {
    if (!link_ || lost_) return;
    // Within one frame, with room for the header and the seal.
    StacksMessage message{request.id, forensics::encode_worker_stacks_within(stacks, kMaxPayload - 4096)};
    send(MessageType::kStacks, rendezvous::encode(message));
  }

  void announce_failure(const Failure& failure) override {
    if (link_ && !lost_) send(MessageType::kFailure, rendezvous::encode(failure));
  }

  Verdict finish(const NodeOutcome& outcome) override {
    try {
      require_link();
      send(MessageType::kOutcome,
           rendezvous::encode(rendezvous::OutcomeMessage{static_cast<std::uint32_t>(round_), outcome}));
      for (;;) {
        Frame frame = wait_for_frame(std::nullopt, "the job's verdict");
        if (frame.type == MessageType::kVerdict) return remember(decode_or_lost(rendezvous::decode_verdict, frame).verdict);
        // A Stop that crossed our Outcome on the wire needs no action now.
      }
    } catch (const util::SystemError& error) {
      return verdict_without_node0(outcome, error.what());
    } catch (const util::Interrupted& interrupted) {
      return interrupted_verdict(outcome, interrupted);
    }
  }

  Verdict stand_by() override {
    NodeOutcome idle;
    idle.succeeded = true;
    try {
      require_link();
      for (;;) {
        Frame frame = wait_for_frame(std::nullopt, "the round's verdict");
        if (frame.type == MessageType::kAbort)
          throw util::SystemError(decode_or_lost(rendezvous::decode_text, frame).reason);
        if (frame.type != MessageType::kVerdict) continue;  // a Stop meant for the nodes with workers
        auto message = decode_or_lost(rendezvous::decode_verdict, frame);
        if (static_cast<int>(message.round) == round_) return remember(message.verdict);
      }
    } catch (const util::SystemError& error) {
      return verdict_without_node0(idle, error.what());
    } catch (const util::Interrupted& interrupted) {
      return interrupted_verdict(idle, interrupted);
    }
  }

 private:
  // Throws LinkLost when node 0's link is gone already.
  void require_link() const {
    if (!link_ || lost_) throw LinkLost(lost_reason_.empty() ? lost_message() : lost_reason_);
  }

  // Node 0 was lost (WHY) while this launcher waited for a verdict: it was
  // left behind, or it takes the rendezvous over, or it decides alone on
  // its own OUTCOME.
  Verdict verdict_without_node0(const NodeOutcome& outcome, const std::string& why) {
    if (auto fenced = left_behind(why)) throw Fenced(*fenced);
    if (can_take_over()) return take_over_verdict(why);
    return decide_alone(outcome, why);
  }

  // Node 0 lost, noticed by this launcher, which is to take over.
  struct Takeover {
    std::string why;                     // how node 0 was lost
    util::Clock::time_point since;       // when this launcher noticed
    util::Clock::time_point last_heard;  // node 0's last frame to this launcher
  };

  // Told to stop while waiting for the verdict: the job ends for this node.
  Verdict interrupted_verdict(const NodeOutcome& outcome, const util::Interrupted& interrupted) const {
    Verdict verdict = decide_verdict(RoundEnd{{outcome}, outcome.failure, true, round_, 0});
    verdict.kind = Verdict::Kind::kFailed;
    if (verdict.exit_code == 0) verdict.exit_code = util::exit_code_of_signal(interrupted.signal);
    verdict.decided_here = true;
    return verdict;
  }

  Verdict remember(Verdict verdict) {
    last_timeline_ = verdict.timeline;
    return verdict;
  }

  // ---- taking over the rendezvous when node 0 is lost
  //
  // Every launcher that loses node 0 computes the same order from the last
  // World: the training nodes by node rank, then the spares. The first in
  // that order hosts the rendezvous on the same port; the others dial it,
  // and move on to the next after a window (the heartbeat timeout plus the
  // handshake's), in which a live successor notices the loss too. Only when
  // the job may go on without a node (spares, --min-nodes) and has a
  // restart left; node 0's own launcher never takes over (its service
  // lives).

  bool can_take_over() const {
    if (service_ || !last_world_ || round_ >= settings_.job.max_restarts) return false;
    return (settings_.job.spare_nodes > 0 || min_nodes() < settings_.job.nnodes) && !successors().empty();
  }

  // --min-nodes; 0 in the settings means the training size.
  int min_nodes() const { return effective_min_nodes(settings_.job.min_nodes, settings_.job.nnodes); }

  // The last World's launchers after node 0, in the order they take over.
  std::vector<int> successors() const {
    std::vector<int> order;
    if (!last_world_ || last_world_->node_slots.empty()) return order;
    order.assign(last_world_->node_slots.begin() + 1, last_world_->node_slots.end());
    order.insert(order.end(), last_world_->spare_slots.begin(), last_world_->spare_slots.end());
    return order;
  }

  std::string address_of(int slot) const {
    const auto& addresses = last_world_->addresses;
    if (slot < 0 || static_cast<std::size_t>(slot) >= addresses.size()) return "";
    return addresses[static_cast<std::size_t>(slot)];
  }

  // Node 0 is lost mid-round: the job restarts with the rendezvous elsewhere.
  Verdict take_over_verdict(const std::string& why) {
    Failure lost;
    lost.node_rank = 0;
    lost.description = why;
    Verdict verdict;
    verdict.kind = Verdict::Kind::kRestart;
    verdict.exit_code = util::kExitFailure;
    verdict.failure = lost;
    verdict.timeline = last_timeline_;
    verdict.decided_here = true;
    auto now = util::Clock::now();
    takeover_ = Takeover{why, now, link_ ? link_->last_heard() : now};
    return verdict;
  }

  // Joins ROUND at the first successor that hosts the rendezvous, hosting it
  // here when this launcher is that one. True when the Join went out.
  bool take_over(int round, util::Clock::time_point deadline) {
    Takeover takeover = *takeover_;
    takeover_.reset();
    link_.reset();
    on_first_service_ = false;
    lost_ = false;
    lost_reason_.clear();
    pending_.clear();
    const auto window = heartbeat_timeout_ + settings_.job.handshake_timeout;
    const std::vector<int> order = successors();
    for (std::size_t i = 0; i < order.size(); ++i) {
      const int slot = order[i];
      const bool here = slot == settings_.node_rank;
      const std::string address = here ? "127.0.0.1" : address_of(slot);
      if (address.empty()) continue;
      if (here) host_taken_over_service(round, order, window, takeover);
      dial_service_at(address);
      try {
        auto window_end = takeover.since + window * static_cast<long>(i + 1);
        connect(round, "", here ? deadline : std::min(deadline, window_end));
        return true;
      } catch (const util::SystemError& error) {
        if (here) throw;
        notice(fmt::format("dlaunch: no rendezvous at {}:{} (slot {}) after node 0 was lost: {}; trying "
                           "the next launcher",
                           address, settings_.port, slot, error.what()));
      }
    }
    throw util::SystemError(fmt::format(
        "node 0 was lost ({}) and no launcher after it took over the rendezvous on port {}",
        takeover.why, settings_.port));
  }

  void dial_service_at(const std::string& address) {
    settings_.master_addr = address;
    DialSettings dial = dial_settings(settings_);
    dial.service_name = "the launcher that took over the rendezvous";
    dialer_ = std::make_unique<ServiceDialer>(std::move(dial), signals_);
  }

  void notice(const std::string& text) const {
    if (settings_.notice) settings_.notice(text);
    else util::console_err().write_message(text);
  }

  // This launcher is first in ORDER: it hosts the rendezvous from ROUND on,
  // where the others will dial it.
  void host_taken_over_service(int round, const std::vector<int>& order, milliseconds window,
                               const Takeover& takeover) {
    const std::string& why = takeover.why;
    rendezvous::ServerSettings server = server_settings();
    server.service_slot = settings_.node_rank;
    server.worker_master_addr = address_of(settings_.node_rank);
    if (server.worker_master_addr.empty()) server.worker_master_addr = settings_.host;
    server.first_round = round;
    server.previous_members = last_world_->node_slots;
    server.benched = last_world_->benched_slots;
    server.expected = order;
    server.expected.insert(server.expected.end(), last_world_->benched_slots.begin(),
                           last_world_->benched_slots.end());
    server.gather_grace = window;
    server.timeline = last_timeline_;
    server.incarnation = last_world_->incarnation;
    server.lost_node0_last_heard = takeover.last_heard;
    std::string moved = fmt::format("node 0 was lost ({}); the rendezvous moves to {} ({}:{})", why,
                                    settings_.host, server.worker_master_addr, settings_.port);
    server.timeline.push_back(fmt::format("{} {}", util::local_time_now(), moved));
    notice("dlaunch: " + moved);
    service_ = std::make_unique<RendezvousServer>(listen_for_service(), server);
    publish_endpoint(server.worker_master_addr);
  }

  util::Fd listen_for_service() const {
    try {
      return util::listen_tcp(settings_.port);
    } catch (const util::SystemError& error) {
      throw util::SystemError(fmt::format(
          "{} cannot host the rendezvous on port {}: {}. Another job may be using it; choose "
          "another with --master-port",
          settings_.node_rank == 0 ? "node 0" : "this launcher", settings_.port, error.what()));
    }
  }

  rendezvous::ServerSettings server_settings() const {
    rendezvous::ServerSettings server;
    server.job = settings_.job;
    server.service_slot = settings_.node_rank;
    server.worker_master_addr = settings_.master_addr;
    if (!server.job.forensics.log) server.job.forensics.log = [](const std::string& line) {
      util::console_err().write_message("dlaunch: " + line + "\n");
    };
    return server;
  }

  void start_service(util::Fd listener) {
    service_ = std::make_unique<RendezvousServer>(std::move(listener), server_settings());
    publish_endpoint(settings_.master_addr);
  }

  // Node ranks by arrival (torchrun's c10d rendezvous, no --node-rank): the
  // first launcher on the endpoint's host to bind its port serves the
  // rendezvous and is node 0; every other launcher asks the service for the
  // first free slot. A port taken here means another launcher serves it
  // (or a stranger holds it: then the token's handshake tells).
  void serve_if_the_endpoint_is_here() {
    if (!util::names_this_host(settings_.master_addr)) return;
    util::Fd listener;
    try {
      listener = util::listen_tcp(settings_.port);
    } catch (const util::SystemError&) {
      return;
    }
    settings_.node_rank = 0;
    by_arrival_ = false;
    dialer_->adopt_slot(0);
    if (responder_) responder_->adopt_slot(0);
    notice(fmt::format("dlaunch: this launcher serves the rendezvous at {}:{} and is node 0 (node ranks by "
                       "arrival: the other launchers get theirs as they join)",
                       settings_.master_addr, settings_.port));
    start_service(std::move(listener));
  }

  // For `dlaunch stacks FOLDER` on a login node (wire/service_endpoint.h).
  void publish_endpoint(const std::string& address) const {
    write_endpoint(settings_.job.forensics.report_folder,
                   ServiceEndpoint{address, numeric_address(address, settings_.port), settings_.port,
                                   settings_.job.run_id, settings_.host});
  }

  // Dials node 0 and joins ROUND with PROBLEM (empty: none) in the handshake.
  void connect(int round, const std::string& problem, util::Clock::time_point deadline) {
    rendezvous::Dialed dialed = dialer_->dial(join_message(round, problem), deadline);
    if (dialed.heartbeat_timeout.count() > 0) adopt_heartbeat_timeout(dialed.heartbeat_timeout);
    if (asks_for_any_slot()) take_given_slot(dialed.slot);
    link_.emplace(std::move(dialed.link));
    link_->set_generation(static_cast<std::uint32_t>(round));
    lost_ = false;
    lost_reason_.clear();
    pending_.clear();
  }

  rendezvous::JoinMessage join_message(int round, const std::string& problem) const {
    rendezvous::JoinMessage join;
    join.run_id = settings_.job.run_id;
    join.round = static_cast<std::uint32_t>(round);
    join.node_rank = asks_for_any_slot() ? kAnySlot : static_cast<std::uint32_t>(settings_.node_rank);
    join.nnodes = static_cast<std::uint32_t>(settings_.job.nnodes);
    join.spare_nodes = static_cast<std::uint32_t>(settings_.job.spare_nodes);
    join.min_nodes = static_cast<std::uint32_t>(min_nodes());
    join.nproc = static_cast<std::uint32_t>(settings_.nproc);
    join.host = settings_.host;
    join.dlaunch_version = DLAUNCH_VERSION;
    join.allow_uneven = settings_.allow_uneven;
    join.preflight_error = problem;
    join.interfaces = interfaces_;
    join.probe_port = responder_ ? static_cast<std::uint32_t>(responder_->port()) : 0;
    join.free_port = free_port();
    // Only between rounds: before the first, a problem is a preflight's.
    if (round > 0 && health_problem_) join.health_error = *health_problem_;
    // A re-join on a proved link needs no proof: its seal is one.
    join.nonce = rendezvous::random_bytes(rendezvous::kChallengeSize);
    return join;
  }

  // Until its first World, a launcher whose node rank comes by arrival asks
  // for any slot on each dial: a slot given on a link that broke may have
  // gone to another launcher since.
  bool asks_for_any_slot() const { return by_arrival_ && !last_world_; }

  // Node 0's service gave this launcher SLOT (the Welcome): probes reach it
  // as that slot, and the World must place it there.
  void take_given_slot(int slot) {
    if (slot < 0 || slot >= settings_.job.nnodes + settings_.job.spare_nodes)
      throw LinkLost(fmt::format("node 0 gave this launcher slot {}, outside 0..{}", slot,
                                 settings_.job.nnodes + settings_.job.spare_nodes - 1));
    settings_.node_rank = slot;
    if (responder_) responder_->adopt_slot(slot);
  }

  // A port free on this host now, for MASTER_PORT should this node take
  // node rank 0 while node 0's host does not train; 0 when none is found.
  std::uint32_t free_port() const {
    try {
      return static_cast<std::uint32_t>(util::pick_free_port("0.0.0.0"));
    } catch (const util::SystemError&) {
      return 0;
    }
  }

  // Waits for ROUND's World and checks it against this node's settings
  // before any worker starts. Before it, node 0 may ask for probes and,
  // before round 0, the gate's check.
  World await_world(int round, util::Clock::time_point deadline) {
    // The service enforces the join deadline and names the missing nodes;
    // the margin only guards against a service that went silent.
    Frame frame = wait_for_frame(deadline + kAnswerMargin, "the world");
    for (;;) {
      if (frame.type == MessageType::kProbe) answer_probe(decode_or_lost(rendezvous::decode_probe, frame));
      else if (frame.type == MessageType::kGate) {
        GateMessage gate = decode_or_lost(rendezvous::decode_gate, frame);
        // The gate may take its whole timeout after the join deadline.
        deadline = std::max(deadline, util::Clock::now() + milliseconds(gate.timeout_ms) + kAnswerMargin);
        run_gate(gate);
      } else break;
      frame = wait_for_frame(deadline + kAnswerMargin, "the world");
    }
    if (frame.type == MessageType::kAbort)
      throw util::SystemError(decode_or_lost(rendezvous::decode_text, frame).reason);
    if (frame.type != MessageType::kWorld)
      throw LinkLost(fmt::format("node 0 ({}) sent an unexpected message while nodes joined", link_->address()));
    World world = decode_or_lost(rendezvous::decode_world, frame);
    rendezvous::WorldExpectation expected{round,           settings_.job.nnodes,  settings_.job.spare_nodes,
                                          settings_.node_rank, settings_.nproc, settings_.job.run_id,
                                          settings_.allow_uneven,
                                          settings_.job.min_nodes};
    if (auto mismatch = rendezvous::world_mismatch(world, expected))
      throw util::SystemError(fmt::format(
          "protocol error: node 0 ({}) sent a world that does not fit this node: it gives {}. Give "
          "every node the same settings and the same dlaunch version",
          link_->address(), *mismatch));
    if (asks_for_any_slot()) {
      dialer_->adopt_slot(settings_.node_rank);
      auto rank = world.node_rank_of(settings_.node_rank);
      notice(rank ? fmt::format("dlaunch: this launcher is node {} (slot {}, by arrival)", *rank, settings_.node_rank)
                  : fmt::format("dlaunch: this launcher has slot {} (by arrival) and stands by", settings_.node_rank));
    }
    round_ = world.round;
    link_->set_generation(static_cast<std::uint32_t>(world.round));
    adopt_heartbeat_timeout(milliseconds(world.heartbeat_timeout_ms));
    last_world_ = world;
    return world;
  }

  template <typename Decode>
  auto decode_or_lost(Decode decode, const Frame& frame) -> decltype(decode(frame.payload)) {
    try {
      return decode(frame.payload);
    } catch (const rendezvous::ProtocolError& error) {
      throw LinkLost(malformed_message(error));
    }
  }

  void wait_until_all_told(util::Clock::time_point deadline) {
    while (util::Clock::now() < deadline) {
      auto step = std::min(deadline, util::Clock::now() + milliseconds(200));
      if (service_->wait_until_all_told(step)) return;
      check_signals();
      try {
        if (link_) keep_link();
      } catch (const LinkLost&) {
      }
    }
  }

  // ---- the network survey and the gate (before a round's World)

  // Every launcher answers probes for the job's life; one that cannot
  // listen still runs, and node 0 then chooses its interface unprobed.
  void start_probe_responder() {
    interfaces_ = net::list_interfaces();
    try {
      responder_ = std::make_unique<ProbeResponder>(probe_identity());
    } catch (const util::SystemError& error) {
      notice(fmt::format("dlaunch: cannot listen for the rendezvous' reachability probes: {}; node 0 "
                         "will choose this host's interface without them",
                         error.what()));
    }
  }

  ProbeIdentity probe_identity() const { return {settings_.job.run_id, settings_.node_rank, settings_.job.token}; }

  void answer_probe(const ProbeMessage& message) {
    ProbeReportMessage report;
    report.round = message.round;
    report.outcomes = probe_targets(message.targets, probe_identity(), kProbeHandshakeTimeout);
    send(MessageType::kProbeReport, rendezvous::encode(report));
  }

  // Runs this node's gate check while keeping the link to node 0, then
  // sends how it ended. Node 0 aborting the job meanwhile kills it.
  void run_gate(const GateMessage& message) {
    std::unique_ptr<GateProcess> check;
    try {
      check = std::make_unique<GateProcess>(message);
    } catch (const util::SystemError& error) {
      GateReportMessage report;
      report.exit_code = util::kExitCannotRun;
      report.error = error.what();
      send(MessageType::kGateReport, rendezvous::encode(report));
      return;
    }
    auto deadline = util::Clock::now() + milliseconds(message.timeout_ms);
    bool ended = false;
    while (!ended && util::Clock::now() < deadline) {
      Woken woken = wait_for_link(std::min(deadline, *next_deadline()), check->fds());
      if (woken.link) queue_frames_or_throw();
      if (woken.other) ended = check->read_some();
      keep_link();
    }
    send(MessageType::kGateReport, rendezvous::encode(check->finish(!ended)));
  }

  // Reads what node 0 sent into pending_; an Abort ends the wait at once.
  void queue_frames_or_throw() {
    bool open = link_->receive();
    try {
      while (auto frame = next_frame()) {
        if (frame->type == MessageType::kAbort)
          throw util::SystemError(decode_or_lost(rendezvous::decode_text, *frame).reason);
        pending_.push_back(std::move(*frame));
      }
    } catch (const rendezvous::ProtocolError& error) {
      throw LinkLost(malformed_message(error));
    }
    if (!open) throw link_lost(NodeZeroLoss::kClosed, lost_message());
  }

  // What one wait of wait_for_link() found ready.
  struct Woken {
    bool link = false;   // node 0's link: readable, closed or failed
    bool other = false;  // one of the other descriptors given
  };

  // One wait of a loop that keeps node 0's link: polls the link (for
  // writing too while it has a backlog), the signals and OTHERS (the gate's
  // check's pipes) until WAKE. A signal that stops the job throws Interrupted.
  Woken wait_for_link(util::Clock::time_point wake, std::span<const int> others = {}) {
    auto woke = process::wait_for_link(link_->fd(), link_->has_backlog(), signals_, wake, others);
    this->wake();
    return {woke.readable, woke.other};
  }

  void check_signals() { process::throw_if_stopped(signals_); }

  // ---- fencing: this launcher left behind by the job

  // Every wake of a loop that keeps the link (they never sleep past the
  // next heartbeat): notes this launcher's own stalls.
  void wake() { stall_.look(util::Clock::now()); }

  // Node 0's silence counts from its last frame, or from this launcher's
  // own last stall, whichever came later: across that stall every peer was
  // silent for it at once (a whole job suspended and resumed goes on).
  util::Clock::time_point heard_since() const { return std::max(link_->last_heard(), stall_.resumed()); }

  void adopt_heartbeat_timeout(milliseconds timeout) {
    heartbeat_timeout_ = timeout;
    stall_.set_threshold(process::stall_threshold(timeout));
  }

  // The next frame from node 0, heartbeats aside. A Fenced frame (node 0
  // dropped this launcher) and a frame of a generation older than this
  // launcher's (a rendezvous the job has left behind) end the link.
  std::optional<Frame> next_frame() {
    auto frame = link_->next();
    if (!frame) return frame;
    if (frame->type == MessageType::kFenced) {
      fenced_reason_ = decode_or_lost(rendezvous::decode_text, *frame).reason;
      throw LinkLost(*fenced_reason_);
    }
    if (frame->generation < generation())
      throw LinkLost(fmt::format("node 0 ({}) speaks for round {}, but this launcher is in round {}: a "
                                 "rendezvous the job has left behind",
                                 link_->address(), frame->generation, generation()));
    return frame;
  }

  std::uint32_t generation() const { return static_cast<std::uint32_t>(round_); }

  // Whether losing node 0 (WHY) means that the job left this launcher
  // behind rather than that node 0 is gone: node 0 said so (Fenced); this
  // launcher itself did not run for longer than node 0 waits for a silent
  // node, so node 0 dropped it, not the other way round; or the job's
  // records show a later round or the job's end. Then it must not take
  // over or decide anything: returns the line it says as it stops.
  std::optional<std::string> left_behind(const std::string& why) {
    auto now = util::Clock::now();
    if (!fenced_reason_) {
      auto stall = stall_.recent(now, 2 * heartbeat_timeout_);
      if (stall && stall->length >= heartbeat_timeout_ - heartbeat_interval(heartbeat_timeout_))
        fenced_reason_ = fmt::format(
            "this launcher ({}) did not run for {:.1f} s (its host froze or it was stopped), longer than "
            "node 0 waits for a silent node ({} s, --heartbeat-timeout), so the job went on without it "
            "({})",
            settings_.host, std::chrono::duration<double>(stall->length).count(),
            util::whole_seconds(heartbeat_timeout_), why);
    }
    // The records say best what became of this node: who took its place.
    if (auto moved = records_say_moved_on()) fenced_reason_ = *moved;
    return fenced_reason_;
  }

  std::optional<std::string> records_say_moved_on() const {
    if (!settings_.records_check || !last_world_ || last_world_->incarnation.empty()) return std::nullopt;
    LauncherPlace place{last_world_->incarnation, round_, last_world_->node_rank_of(settings_.node_rank),
                        settings_.node_rank, settings_.host};
    return settings_.records_check(place);
  }

  // Remembers why node 0 is lost, for the verdict this node then makes alone.
  std::string mark_lost(const std::string& reason) {
    lost_ = true;
    lost_reason_ = reason;
    return reason;
  }

  // Queues a frame to node 0 (never blocks); a failed connection shows on
  // the next read.
  void send(MessageType type, const std::string& payload) {
    if (!link_->send(type, payload)) lost_ = true;
  }

  // Sends a heartbeat when one is due and writes what waits in the outbox.
  // Throws LinkLost when node 0 has been silent, or has not read, for the
  // heartbeat timeout.
  void keep_link() {
    wake();
    auto now = util::Clock::now();
    if (now - heard_since() > heartbeat_timeout_)
      throw link_lost(NodeZeroLoss::kSilent, fmt::format("node 0 ({}:{}) sent nothing for {} s (--heartbeat-timeout): its host "
                                 "may be down, its network cut, or its launcher frozen",
                                 settings_.master_addr, settings_.port, util::whole_seconds(heartbeat_timeout_)));
    if (!link_->flush()) throw link_lost(NodeZeroLoss::kClosed, lost_message());
    if (link_->has_backlog() && now - std::max(link_->backlog_since(), stall_.resumed()) > heartbeat_timeout_)
      throw link_lost(NodeZeroLoss::kSilent, fmt::format("node 0 ({}:{}) read nothing from node {} for {} s "
                                 "(--heartbeat-timeout): its launcher is stuck or its network cut",
                                 settings_.master_addr, settings_.port, settings_.node_rank,
                                 util::whole_seconds(heartbeat_timeout_)));
    if (reports_progress() && now - last_progress_sent_ >= progress_interval()) send_progress(now);
    if (now - link_->last_sent() >= heartbeat_interval(heartbeat_timeout_)) send(MessageType::kHeartbeat, "");
  }

  // ---- progress and stack captures (--hang-timeout, --straggler-lag, dlaunch stacks)

  bool reports_progress() const {
    return progress_ != nullptr &&
           (settings_.job.forensics.hang.hang_timeout.count() > 0 || settings_.job.forensics.hang.straggler_lag > 0);
  }

  // Four reports per hang timeout, so node 0's view lags by a quarter at
  // most; never more often than a second, never less than the heartbeat.
  milliseconds progress_interval() const {
    milliseconds interval = heartbeat_interval(heartbeat_timeout_);
    if (settings_.job.forensics.hang.hang_timeout.count() > 0)
      interval = std::min(interval, std::max(milliseconds(1000), settings_.job.forensics.hang.hang_timeout / 4));
    return interval;
  }

  // Counts as a heartbeat: every frame does.
  void send_progress(util::Clock::time_point now) {
    last_progress_sent_ = now;
    ProgressMessage message;
    message.round = static_cast<std::uint32_t>(round_);
    auto idle = std::chrono::duration_cast<milliseconds>(now - progress_->last_progress()).count();
    message.idle_ms = static_cast<std::uint32_t>(std::clamp<long long>(idle, 0, 0xffffffffLL));
    message.steps = progress_->steps();
    send(MessageType::kProgress, rendezvous::encode(message));
  }

  // Only while this node's workers run: a spare has nothing to capture.
  void take_capture_request(const CaptureMessage& message) {
    if (progress_ == nullptr || static_cast<int>(message.round) != round_) return;
    captures_.push_back(CaptureRequest{message.id, message.hang});
  }

  std::optional<NodeZeroLoss> first_node0_loss() const override { return first_node0_loss_; }

  // The link to node 0 failed HOW; remembered when that node 0 is the
  // job's first (slot 0's launcher, whose host runs a Slurm job's batch
  // script: launch/launcher.cc asks how it was lost).
  LinkLost link_lost(NodeZeroLoss how, const std::string& why) {
    if (last_world_ && on_first_service_ && !first_node0_loss_) first_node0_loss_ = how;
    return LinkLost(why);
  }

  std::string lost_message() const {
    return fmt::format("lost contact with the rendezvous on node 0 ({}:{}): its launcher exited or "
                       "was killed",
                       settings_.master_addr, settings_.port);
  }

  std::string malformed_message(const rendezvous::ProtocolError& error) const {
    return fmt::format("protocol error: node 0 ({}:{}) sent a malformed message: {}", settings_.master_addr,
                       settings_.port, error.what());
  }

  // The next frame (queued ones first), waiting until DEADLINE (none: forever)
  // while keeping the heartbeat. Throws LinkLost when the link fails and
  // SystemError at DEADLINE.
  Frame wait_for_frame(std::optional<util::Clock::time_point> deadline, const char* waiting_for) {
    for (;;) {
      if (!pending_.empty()) {
        Frame frame = std::move(pending_.front());
        pending_.erase(pending_.begin());
        return frame;
      }
      if (lost_) throw link_lost(NodeZeroLoss::kClosed, lost_message());
      try {
        if (auto frame = next_frame()) return *frame;
      } catch (const rendezvous::ProtocolError& error) {
        throw LinkLost(malformed_message(error));
      }
      auto wake = *next_deadline();
      if (deadline) wake = std::min(wake, *deadline);
      if (wait_for_link(wake).link && !link_->receive()) {
        try {
          if (auto frame = next_frame()) return *frame;  // said its last word, then closed
        } catch (const rendezvous::ProtocolError& error) {
          throw LinkLost(malformed_message(error));
        }
        throw link_lost(NodeZeroLoss::kClosed, lost_message());
      }
      keep_link();
      if (deadline && util::Clock::now() >= *deadline && !link_->mid_frame())
        throw util::SystemError(fmt::format("timed out waiting for {} from the rendezvous at {}:{}",
                                      waiting_for, settings_.master_addr, settings_.port));
    }
  }

  // Node 0 is gone: this node decides alone, by the same rule, with node 0
  // as a lost node (never a restart). The job's first failure is this
  // node's own, if it had one, else the loss of node 0.
  Verdict decide_alone(const NodeOutcome& outcome, const std::string& why) const {
    Failure lost;
    lost.node_rank = 0;
    lost.description = why;
    NodeOutcome node0;
    node0.failure = lost;
    Verdict verdict =
        decide_verdict(RoundEnd{{outcome, node0}, outcome.failure ? outcome.failure : lost, true, round_, 0});
    verdict.decided_here = true;
    return verdict;
  }

  RendezvousSettings settings_;
  process::SignalChannel& signals_;
  std::unique_ptr<ServiceDialer> dialer_;  // to node 0's service, or to the one that took over
  // The last World (who trained, who stood by, where each launcher is) and
  // timeline: what a take-over of the rendezvous starts from.
  std::optional<World> last_world_;
  // The health check this launcher failed before the round it joins next (report_health).
  std::optional<std::string> health_problem_;
  // No slot of its own at the start: node 0's service gives one (kAnySlot).
  bool by_arrival_ = false;
  std::vector<std::string> last_timeline_;
  std::optional<Takeover> takeover_;
  bool on_first_service_ = true;  // the link is to slot 0's service (no take-over yet)
  std::optional<NodeZeroLoss> first_node0_loss_;
  std::unique_ptr<rendezvous::RendezvousServer> service_;
  std::vector<net::Interface> interfaces_;  // this host's, as every Join reports them
  std::unique_ptr<ProbeResponder> responder_;
  std::optional<rendezvous::ServiceLink> link_;
  std::vector<Frame> pending_;
  const ProgressSource* progress_ = nullptr;  // while this node's workers run
  util::Clock::time_point last_progress_sent_{};
  std::vector<CaptureRequest> captures_;  // asked for by node 0, not yet taken by the supervisor
  bool lost_ = false;
  std::string lost_reason_;
  std::optional<std::string> fenced_reason_;  // set once the job left this launcher behind
  int round_ = 0;
  milliseconds heartbeat_timeout_;
  process::StallWatch stall_;  // this launcher's own stalls
};

}  // namespace

std::unique_ptr<Coordinator> make_rendezvous_coordinator(const RendezvousSettings& settings,
                                                         process::SignalChannel& signals) {
  return std::make_unique<RendezvousCoordinator>(settings, signals);
}

}  // namespace dlaunch::rendezvous
