#include "service/rendezvous_server.h"

#include <algorithm>
#include <condition_variable>
#include <fmt/format.h>
#include <map>
#include <mutex>
#include <set>
#include <unordered_map>
#include <vector>

#include "doctor/diagnosis.h"
#include "doctor/repeat_guard.h"
#include "process/event_loop.h"
#include "process/stall_watch.h"
#include "service/gate_step.h"
#include "service/hang_duty.h"
#include "service/peer_table.h"
#include "service/recovery_log.h"
#include "service/roster.h"
#include "service/service_peer.h"
#include "service/verdict.h"
#include "survey/network_survey.h"
#include "survey/probe_responder.h"
#include "util/console.h"
#include "util/error.h"
#include "util/open_file_limit.h"
#include "util/ports.h"
#include "util/socket.h"
#include "util/strings.h"
#include "wire/peer_connection.h"
#include "wire/protocol.h"
#include "wire/session.h"
#include "wire/token.h"

namespace dlaunch::rendezvous {
namespace {

// Unproven connections held at most, whatever the open-file limit: each
// costs a descriptor and a few hundred bytes.
constexpr std::size_t kMostUnproven = 16384;
// Descriptors kept for everything else node 0's launcher opens (workers'
// pipes, log files, the launchers that did prove themselves).
constexpr std::size_t kReservedDescriptors = 256;
// Connections handled per wake-up at the most, before the tick's deadlines.
constexpr int kEventsPerBatch = 256;
// How long the service waits for probe reports beyond the probes' own
// deadline, and for gate reports beyond --gate-timeout.
constexpr std::chrono::milliseconds kProbeReportMargin{1'500};
constexpr std::chrono::milliseconds kGateReportMargin{10'000};
// A node lost this many times in one job (it froze, or its link dropped)
// is benched when it comes back: a host that fails like that tends to
// fail again, and each loss costs the whole job a round.
constexpr int kLossesToBench = 2;

// The non-empty lines of TEXT.
std::vector<std::string> summary_lines(const std::string& text) {
  std::vector<std::string> lines;
  for (auto& line : util::split(text, '\n')) {
    if (!line.empty()) lines.push_back(std::move(line));
  }
  return lines;
}

// How many unproven connections to hold with OPEN_FILES descriptors allowed.
std::size_t unproven_capacity(std::size_t open_files, int nnodes) {
  std::size_t reserved = kReservedDescriptors + static_cast<std::size_t>(nnodes);
  std::size_t room = open_files > reserved ? open_files - reserved : 0;
  return std::clamp<std::size_t>(room / 2, 16, kMostUnproven);
}

// The bounds of node 0's connections: unproven ones held at once (from the
// open-file limit, raised to its hard limit, unless SETTINGS say), and how
// long one may take to prove the token.
PeerTableSettings table_settings(const ServerSettings& settings) {
  std::size_t open_files = util::raise_open_file_limit(2 * kMostUnproven + kReservedDescriptors);
  PeerTableSettings table;
  table.max_unproven = settings.max_unproven > 0 ? settings.max_unproven
                                                 : unproven_capacity(open_files, settings.job.nnodes);
  table.handshake_timeout = settings.job.handshake_timeout;
  return table;
}

}  // namespace

class RendezvousServer::Loop final : public PeerTableHost, public HangDutyHost, public GateStepHost {
 public:
  Loop(util::Fd listener, ServerSettings settings)
      : settings_(std::move(settings)),
        events_(kEventsPerBatch),
        table_(std::move(listener), table_settings(settings_), events_, *this),
        stall_(process::stall_threshold(settings_.job.heartbeat_timeout)),
        recovery_(settings_.timeline),
        hang_(settings_.job.forensics, settings_.job.heartbeat_timeout, *this),
        gate_(settings_.job.gate, settings_.job.forensics.report_folder, *this) {
    if (settings_.incarnation.empty()) settings_.incarnation = generate_token().substr(0, 16);
    auto now = util::Clock::now();
    round_ = settings_.first_round;
    set_members(settings_.previous_members);
    benched_.insert(settings_.benched.begin(), settings_.benched.end());
    if (taking_over()) {
      recovery_.failure_noticed(now);  // node 0 was lost just now
      recovery_.fault(settings_.lost_node0_last_heard.value_or(now));
      events_.at(now + settings_.gather_grace, [this] {
        grace_passed_ = true;
        maybe_start_round();
      });
    }
    if (settings_.job.gate.enabled && !taking_over())
      events_.at(now + settings_.job.gate.timeout, [this] {
        gate_arrival_passed_ = true;
        maybe_start_round();
      });
    arm_join_deadline();
    tick_ = std::min(std::chrono::milliseconds(250), heartbeat_interval(settings_.job.heartbeat_timeout));
    arm_tick(now + tick_);
    last_heartbeat_ = now;
  }

  // On the service's thread, until stop().
  void run() {
    // Closed peers are freed between batches, after the events that may still name them.
    events_.run_until([this] {
      table_.free_closed();
      return false;
    });
  }

  // From any thread: run() returns.
  void stop() { events_.stop(); }

  bool wait_until_all_told(util::Clock::time_point deadline) {
    std::unique_lock lock(told_mutex_);
    return told_changed_.wait_until(lock, deadline,
                                    [&] { return static_cast<int>(told_.size()) >= settings_.job.nnodes; });
  }

 private:
  enum class Phase { kJoining, kRunning, kDone };

  // While the nodes join round round_: those missing then abort the job,
  // and until then the log says every few seconds whom the job waits for.
  void arm_join_deadline() {
    auto now = util::Clock::now();
    events_.cancel(join_deadline_);
    join_deadline_ = events_.at(now + settings_.job.join_timeout, [this] {
      if (phase_ == Phase::kJoining) abort_missing();
    });
    gathering_since_ = now;
    next_waiting_line_ = settings_.job.waiting_lines.interval_after(std::chrono::milliseconds(0));
    arm_waiting_line();
  }

  // Due times count from the start of the gathering, so lines land on round
  // numbers (5 s, 10 s, ...) however late the loop wakes.
  void arm_waiting_line() {
    events_.cancel(waiting_line_);
    waiting_line_ = events_.at(gathering_since_ + next_waiting_line_, [this] {
      if (phase_ != Phase::kJoining) return;
      log(gathering_line(gathering_nodes()));
      next_waiting_line_ += settings_.job.waiting_lines.interval_after(next_waiting_line_);
      arm_waiting_line();
    });
  }

  // Who the gathering round still lacks. Round 0 (and a take-over's first
  // round) waits for launchers that never came; a later round only for
  // those still connected to join again, unless too few are.
  GatheringNodes gathering_nodes() const {
    GatheringNodes gathering;
    gathering.expected_hosts = settings_.job.expected_hosts;
    gathering.needed = settings_.job.nnodes;
    gathering.spares = settings_.job.spare_nodes > 0;
    for (int slot : joined_) gathering.joined += benched_.count(slot) == 0 ? 1 : 0;
    gathering.waited = std::chrono::duration_cast<std::chrono::milliseconds>(util::Clock::now() - gathering_since_);
    gathering.timeout = settings_.job.join_timeout;
    const bool first_round = round_ == 0 || (taking_over() && round_ == settings_.first_round);
    if (!first_round) {
      for (const auto& [slot, peer] : launchers_)
        if (joined_.count(slot) == 0) gathering.missing.push_back(slot);
      if (!gathering.missing.empty()) return gathering;
    }
    for (int slot = 0; slot < launcher_count(); ++slot) {
      bool expected = !taking_over() || round_ != settings_.first_round ||
                      std::count(settings_.expected.begin(), settings_.expected.end(), slot) > 0;
      if (expected && joined_.count(slot) == 0 && benched_.count(slot) == 0) gathering.missing.push_back(slot);
    }
    return gathering;
  }

  // The fixed tick: heartbeats, and the handshake and heartbeat deadlines.
  void arm_tick(util::Clock::time_point when) {
    events_.at(when, [this] {
      auto now = util::Clock::now();
      on_tick(now);
      arm_tick(now + tick_);
    });
  }

  // MESSAGE as one line: what peers sent (a host name, a run id, even from
  // a stranger refused for its token) may hold newlines or terminal
  // escapes, which must neither forge lines of this log nor drive the
  // terminal.
  void log(const std::string& message) override {
    std::string line = util::escaped(message);
    if (settings_.log) settings_.log(line);
    // Through the launcher's console sink: a stalled stderr must not stall
    // this thread (and with it every node's heartbeat).
    else util::console_err().write_message(fmt::format("dlaunch: rendezvous: {}", line));
  }

  // ---- the connections (service/peer_table.h): what they mean

  void on_connected(Peer& peer, util::Clock::time_point now) override {
    wake(now);
    ChallengeMessage challenge{peer.challenge, settings_.job.token.has_value(),
                               static_cast<std::uint32_t>(settings_.job.heartbeat_timeout.count())};
    send(peer, MessageType::kChallenge, encode(challenge));
  }

  void on_closed(Peer& peer) override {
    hang_.forget(&peer);
    auto known = launchers_.find(peer.slot);
    if (known != launchers_.end() && known->second == &peer) {
      launchers_.erase(known);
      joined_.erase(peer.slot);
    }
  }

  void on_peer_event(Peer& peer, std::uint32_t events) override {
    if (peer.closed) return;
    auto now = util::Clock::now();
    wake(now);
    if ((events & EPOLLOUT) != 0 && !table_.flush(peer, now)) return on_disconnect(peer);
    if ((events & (EPOLLIN | EPOLLHUP | EPOLLERR)) == 0) return;
    bool open = peer.connection.receive(now);
    try {
      while (!peer.closed) {
        auto frame = peer.connection.next_frame();
        if (!frame) break;
        handle(peer, *frame);
      }
    } catch (const ProtocolError& error) {
      on_protocol_error(peer, error);
      return;
    }
    if (!open && !peer.closed) on_disconnect(peer);
  }

  // The round this service is in, which every frame it sends carries.
  std::uint32_t generation() const { return static_cast<std::uint32_t>(round_); }

  void handle(Peer& peer, const Frame& frame) {
    if (!peer.authenticated) {
      // Only a Join may come first; it carries its own proof.
      if (frame.type == MessageType::kSealedJoin) return on_sealed_join(peer, frame);
      if (frame.type != MessageType::kJoin) throw ProtocolError("a message before joining");
      JoinMessage join = checked_join(frame, frame.payload);
      // A holder of the token seals its Join: one in clear with a proof is
      // not from this dlaunch, and would have shown the Join on the path.
      if (settings_.job.token && !join.proof.empty()) throw ProtocolError("a Join with a token proof sent in clear");
      return on_join(peer, join);
    }
    std::string payload = peer.session.open(frame);
    if (deposed_) {
      if (frame.type == MessageType::kJoin) fence(peer, deposed_reason_);
      return;
    }
    // What a launcher reports of a round is that round's only: a report of
    // an earlier one (sent before the launcher heard the verdict, or by a
    // launcher the job left behind) is stale, and dropped.
    if (reports_on_a_round(frame.type) && frame.generation != generation()) return;
    switch (frame.type) {
      case MessageType::kJoin: on_join(peer, checked_join(frame, payload)); break;
      case MessageType::kHeartbeat: decode_heartbeat(payload); break;
      case MessageType::kStarted: {
        decode_heartbeat(payload);  // empty, like a heartbeat
        on_started(peer);
        break;
      }
      case MessageType::kFailure: on_failure(peer, decode_failure(payload)); break;
      case MessageType::kOutcome: on_outcome(peer, decode_outcome(payload)); break;
      case MessageType::kProgress: on_progress(peer, decode_progress(payload)); break;
      case MessageType::kStacks: on_stacks(peer, decode_stacks(payload)); break;
      case MessageType::kProbeReport: on_probe_report(peer, decode_probe_report(payload)); break;
      case MessageType::kGateReport: on_gate_report(peer, decode_gate_report(payload)); break;
      default: throw ProtocolError("a launcher sent a message only the service sends");
    }
  }

  static bool reports_on_a_round(MessageType type) {
    switch (type) {
      case MessageType::kFailure:
      case MessageType::kOutcome:
      case MessageType::kProgress:
      case MessageType::kStacks:
      case MessageType::kStarted:
      case MessageType::kProbeReport:
      case MessageType::kGateReport: return true;
      default: return false;
    }
  }

  // A launcher's first Join, sealed under the session its nonce and node 0's
  // challenge make with the token. A Join that does not open is refused
  // like a wrong proof; node 0 without a token cannot open it at all.
  void on_sealed_join(Peer& peer, const Frame& frame) {
    SealedJoinMessage sealed = decode_sealed_join(frame.payload);
    const int claimed = slot_claimed(sealed.slot);
    if (!settings_.job.token)
      return refuse(peer, fmt::format("refused {}: it holds a rendezvous token, this node 0 none", describe(peer)),
                    "it has a rendezvous token but node 0 has none; give every node the same token, or none");
    Session session(*settings_.job.token, peer.challenge, sealed.nonce, End::kService);
    std::string payload;
    try {
      payload = session.open(frame.type, frame.generation, sealed.sealed);
    } catch (const ProtocolError&) {
      const std::string why = "its rendezvous token is wrong";
      refused_ranks_[claimed] = fmt::format("a launcher claiming {} from {} was refused: {}", claim(claimed),
                                            peer.connection.address(), why);
      return refuse(peer, fmt::format("refused {} (claiming {}): {}", describe(peer), claim(claimed), why),
                    "node 0 refused this launcher: its rendezvous token is wrong. Give every node the same "
                    "token ($DLAUNCH_RDZV_TOKEN or --rdzv-token-file)");
    }
    JoinMessage join = checked_join(frame, payload);
    if (join.nonce != sealed.nonce || join.node_rank != sealed.slot)
      throw ProtocolError("a sealed Join whose nonce or slot is not its frame's");
    peer.session = std::move(session);
    on_join(peer, join);
  }

  // A Join's frame carries the round it joins as its generation.
  static JoinMessage checked_join(const Frame& frame, std::string_view payload) {
    JoinMessage join = decode_join(payload);
    if (frame.generation != join.round)
      throw ProtocolError(fmt::format("a Join for round {} in a frame of generation {}", join.round,
                                      frame.generation));
    return join;
  }

  // A stranger is refused; a node of the job that breaks the protocol
  // (garbage, a frame that fails its tag) is lost like a node that died, so
  // a running job stops instead of waiting for its outcome forever.
  void on_protocol_error(Peer& peer, const ProtocolError& error) {
    if (!peer.authenticated || peer.slot < 0)
      return refuse(peer, fmt::format("refused {}: {}", describe(peer), error.what()), error.what());
    std::string why = fmt::format("{} broke the rendezvous protocol: {}", name(peer), error.what());
    log(why);
    send(peer, MessageType::kAbort, encode(TextMessage{static_cast<std::uint32_t>(round_), error.what()}));
    lose(peer, why, util::Clock::now());
  }

  std::string describe(const Peer& peer) const {
    if (peer.host.empty()) return fmt::format("a connection from {}", peer.connection.address());
    return fmt::format("{} ({}, {})", peer.host, role(peer.slot), peer.connection.address());
  }

  // A Join's slot as an int: -1 for kAnySlot (a node rank by arrival).
  static int slot_claimed(std::uint32_t slot) {
    return slot == kAnySlot ? -1 : static_cast<int>(std::min<std::uint32_t>(slot, 1u << 30));
  }

  // What a Join claimed, for the log: "node 2", or no node rank at all.
  static std::string claim(int slot) {
    return slot < 0 ? std::string("no node rank: one by arrival") : fmt::format("node {}", slot);
  }

  // The first slot no launcher holds, for a launcher whose node rank comes
  // by arrival; never the service's own (its launcher joins from inside),
  // a benched one, or one whose launcher was dropped and may come back.
  std::optional<int> free_slot() const {
    for (int slot = 0; slot < launcher_count(); ++slot) {
      if (slot != settings_.service_slot && launchers_.count(slot) == 0 && benched_.count(slot) == 0 &&
          dropped_.count(slot) == 0)
        return slot;
    }
    return std::nullopt;
  }

  // A launcher as the log names it: "node 1 (host)", or "spare slot 2 (host)".
  std::string name(const Peer& peer) const {
    return fmt::format("{} ({})", role(peer.slot), peer.host.empty() ? "host unknown" : peer.host);
  }

  // "node 1" while SLOT trains, else what it is.
  std::string role(int slot) const {
    if (auto rank = member_rank(slot)) return fmt::format("node {}", *rank);
    if (benched_.count(slot) > 0) return fmt::format("benched slot {}", slot);
    if (settings_.job.spare_nodes == 0) return fmt::format("node {}", slot);
    return fmt::format("spare slot {}", slot);
  }

  // SLOT's node rank in the current (or, between rounds, the last) round.
  // Looked up, not searched: every relayed Stop, Outcome and Progress asks,
  // and a search of N slots each made the failure broadcast O(N^2).
  std::optional<int> member_rank(int slot) const {
    auto found = rank_of_slot_.find(slot);
    if (slot < 0 || found == rank_of_slot_.end()) return std::nullopt;
    return found->second;
  }

  void set_members(std::vector<int> members) {
    members_ = std::move(members);
    rank_of_slot_.clear();
    for (std::size_t rank = 0; rank < members_.size(); ++rank)
      rank_of_slot_.emplace(members_[rank], static_cast<int>(rank));  // the first, as a search found it
  }

  int launcher_count() const { return settings_.job.nnodes + settings_.job.spare_nodes; }
  int min_nodes() const { return effective_min_nodes(settings_.job.min_nodes, settings_.job.nnodes); }

  // Tells PEER why it is turned away, logs REASON, and closes it.
  void refuse(Peer& peer, const std::string& reason, const std::string& told) {
    table_.log_refusal(reason);
    send(peer, MessageType::kAbort, encode(TextMessage{static_cast<std::uint32_t>(round_), told}));
    table_.close(peer);
  }

  void on_join(Peer& peer, const JoinMessage& join) {
    int rank = slot_claimed(join.node_rank);
    auto who = [&] { return fmt::format("{} ({}, {})", join.host, claim(rank), peer.connection.address()); };
    if (!peer.authenticated && !authentic(peer, join)) {
      std::string why = join.proof.empty() ? "it presented no rendezvous token, but this job requires one"
                                           : "its rendezvous token is wrong";
      refused_ranks_[rank] = fmt::format("a launcher claiming {} from {} was refused: {}", claim(rank),
                                         peer.connection.address(), why);
      return refuse(peer, fmt::format("refused {}: {}", who(), why),
                    fmt::format("node 0 refused this launcher: {}. Give every node the same token "
                                "($DLAUNCH_RDZV_TOKEN or --rdzv-token-file)",
                                why));
    }
    if (rank < 0 && !join.observer) {
      // Its node rank comes by arrival: the first free slot, given in the Welcome.
      if (peer.authenticated) throw ProtocolError("a Join for any slot on a link that has one");
      auto given = free_slot();
      if (!given)
        return refuse(peer, fmt::format("refused {}: every slot of the job is taken ({} launcher{})", who(),
                                        launcher_count(), launcher_count() == 1 ? "" : "s"),
                      fmt::format("node 0's rendezvous already has all {} launchers of the job (--nnodes {}{}); "
                                  "this one is one too many. Start as many launchers as the job has nodes",
                                  launcher_count(), settings_.job.nnodes,
                                  settings_.job.spare_nodes > 0
                                      ? fmt::format(" and --spare-nodes {}", settings_.job.spare_nodes)
                                      : ""));
      rank = *given;
      log(fmt::format("{} ({}) has no node rank of its own: it takes slot {}, the first free one", join.host,
                      peer.connection.address(), rank));
    }
    if (!peer.authenticated) admit(peer, rank);
    if (join.observer) return on_observer(peer, join);
    if (join.run_id != settings_.job.run_id)
      return refuse(peer,
                    fmt::format("refused {}: it belongs to job '{}', this rendezvous serves job '{}'",
                                who(), join.run_id, settings_.job.run_id),
                    fmt::format("node 0's rendezvous serves job '{}', not '{}'; give every node the "
                                "same --rdzv-id",
                                settings_.job.run_id, join.run_id));
    peer.host = join.host;
    if (phase_ == Phase::kDone && abort_reason_) return tell_abort(peer, rank);
    // A launcher this service dropped while it was unreachable, come back
    // with its old workers' round: the job went on without it.
    if (auto dropped = dropped_.find(rank); dropped != dropped_.end() && join.round > 0)
      return fence(peer, fmt::format("this launcher (slot {}) is out of the job: {}; the job is in round {} "
                                     "without it",
                                     rank, dropped->second, round_));
    if (auto problem = preflight_problem(join, rank)) return abort_job(*problem, &peer, rank);
    auto existing = launchers_.find(rank);
    if (existing != launchers_.end() && existing->second != &peer)
      return abort_job(fmt::format("node rank {} joined twice, from {} and from {}; give every node a "
                                   "distinct --node-rank",
                                   rank, existing->second->host, join.host),
                       &peer, rank);
    // A launcher that comes while a round runs (a spare started late, a
    // lost node's launcher started again) stands by in that round; one that
    // comes while the others gather for a later round joins that round.
    bool late = phase_ == Phase::kRunning && peer.slot < 0 && settings_.job.spare_nodes > 0;
    if (!late && !new_between_rounds(peer, join) &&
        (phase_ != Phase::kJoining || static_cast<int>(join.round) != round_))
      return refuse(peer, fmt::format("refused {}: it joined round {} but the job is in round {} and {}",
                                      who(), join.round, round_, phase_name()),
                    fmt::format("the job is in round {}, this launcher joined round {}", round_, join.round));
    peer.slot = rank;
    launchers_[rank] = &peer;
    nodes_[rank] = NodeInfo{static_cast<int>(join.nproc), join.allow_uneven, join.host,
                            rank == settings_.service_slot ? settings_.worker_master_addr
                                                           : util::peer_ip(peer.connection.fd()),
                            static_cast<int>(join.free_port)};
    survey_.add_host(rank, join.host, join.interfaces, join.probe_port);
    if (late) return stand_by_late(peer);
    if (!join.health_error.empty() && !bench_unhealthy(rank, join)) return;
    bench_flaky(rank, join);
    joined_.insert(rank);
    maybe_start_round();
  }

  // Round 0 starts once the training size has joined, node 0 among them
  // (the first to join train, the rest stand by). A later round starts once
  // every launcher still connected has joined again, so nodes that stay
  // keep their node ranks, with at least --min-nodes of them.
  // Called on every Join: what it counts it counts only once enough have
  // joined, as counting the joined on each of N Joins was O(N^2).
  void maybe_start_round() {
    if (phase_ != Phase::kJoining || pre_round_ != PreRound::kNone) return;
    auto count_eligible = [this] {
      int eligible = 0;
      for (int slot : joined_) eligible += benched_.count(slot) == 0 ? 1 : 0;
      return eligible;
    };
    if (taking_over() && round_ == settings_.first_round) return gather_after_takeover(count_eligible());
    if (round_ == 0 && gate_pending()) {
      // The gate checks every launcher of the allocation, spares included:
      // it waits for all of them, or for --gate-timeout.
      bool all_here = static_cast<int>(joined_.size()) >= launcher_count();
      if (joined_.count(settings_.service_slot) > 0 && (all_here || gate_arrival_passed_)) prepare_round();
      return;
    }
    // No more are eligible than have joined.
    if (round_ == 0) {
      if (static_cast<int>(joined_.size()) >= settings_.job.nnodes && joined_.count(settings_.service_slot) > 0 &&
          count_eligible() >= settings_.job.nnodes)
        prepare_round();
      return;
    }
    // Fewer joined than connected: one connected launcher has not joined.
    if (joined_.size() < launchers_.size()) return;
    for (const auto& [slot, peer] : launchers_) {
      if (joined_.count(slot) == 0) return;
    }
    if (count_eligible() >= std::max(1, min_nodes())) prepare_round();
  }

  bool taking_over() const { return settings_.first_round > 0; }

  // JOIN is a launcher's first (round 0, on a new link) while the others
  // gather for a later round: a spare whose srun task started after the
  // first failure. It joins the round they gather for.
  bool new_between_rounds(const Peer& peer, const JoinMessage& join) const {
    return phase_ == Phase::kJoining && round_ > 0 && peer.slot < 0 && join.round == 0 &&
           settings_.job.spare_nodes > 0;
  }

  // Slots no launcher has joined yet in this job: spares on their way (on
  // a loaded cluster one srun task may start seconds after the others).
  // Until the join deadline the job counts on them to replace a node. A
  // service that took over never saw the first joins: it counts none.
  int spares_on_their_way() const { return taking_over() ? 0 : static_cast<int>(slots_never_joined().size()); }

  std::vector<int> slots_never_joined() const {
    std::vector<int> absent;
    for (int slot = 0; slot < launcher_count(); ++slot)
      if (nodes_.count(slot) == 0) absent.push_back(slot);
    return absent;
  }

  // The first round of a service that took over from a lost node 0: the
  // launchers arrive as each notices the loss.
  void gather_after_takeover(int eligible) {
    int expected_joined = 0;
    for (int slot : settings_.expected) expected_joined += joined_.count(slot) > 0 ? 1 : 0;
    bool all_here = expected_joined == static_cast<int>(settings_.expected.size());
    if (eligible >= settings_.job.nnodes || (all_here && eligible >= min_nodes())) return prepare_round();
    if (!grace_passed_) return;
    bool majority = 2 * expected_joined > static_cast<int>(settings_.expected.size());
    if (majority && eligible >= min_nodes()) return prepare_round();
    abort_job(fmt::format("after node 0 was lost, {} of the {} launchers left reached this node's "
                          "rendezvous within {} s (the job needs {}{}): this node may be the one cut "
                          "off, so it stops here",
                          expected_joined, settings_.expected.size(),
                          std::chrono::duration_cast<std::chrono::seconds>(settings_.gather_grace).count(),
                          min_nodes(), majority ? "" : ", and more than half of them"),
              nullptr, -1);
  }

  void stand_by_late(Peer& peer) {
    World world = world_;
    world.spare_slots.push_back(peer.slot);
    std::sort(world.spare_slots.begin(), world.spare_slots.end());
    log(fmt::format("{} joined: it stands by while round {} runs", name(peer), round_));
    send(peer, MessageType::kWorld, encode(world));
  }

  const char* phase_name() const {
    switch (phase_) {
      case Phase::kJoining: return "still gathering";
      case Phase::kRunning: return "running";
      case Phase::kDone: return "over";
    }
    return "";
  }

  bool authentic(const Peer& peer, const JoinMessage& join) const {
    if (!settings_.job.token) return true;
    return proofs_match(join_proof(*settings_.job.token, peer.challenge, join.nonce, signed_part(join)),
                        join.proof);
  }

  // PEER proved the token (or none is needed): from now on every frame both
  // ways is sealed, and the Welcome is node 0's proof to the launcher. With
  // a token only a SealedJoin gets here, and it made the session
  // (on_sealed_join): a Join in clear is refused before.
  void admit(Peer& peer, int slot) {
    table_.mark_proven(peer);
    WelcomeMessage welcome{static_cast<std::uint32_t>(settings_.job.heartbeat_timeout.count()),
                           static_cast<std::uint32_t>(std::max(slot, 0))};
    send(peer, MessageType::kWelcome, encode(welcome));
  }

  // What makes an authenticated node unable to run with the others: the
  // whole job stops at once, instead of waiting for a join timeout.
  std::optional<std::string> preflight_problem(const JoinMessage& join, int rank) const {
    const std::string node = fmt::format("node {} ({})", rank, join.host);
    if (!join.preflight_error.empty())
      return fmt::format("{} failed its preflight: {}", node, join.preflight_error);
    if (join.dlaunch_version != settings_.dlaunch_version)
      return fmt::format("{} runs dlaunch {} but node 0 runs {}; install the same dlaunch on every node",
                         node, join.dlaunch_version, settings_.dlaunch_version);
    if (static_cast<int>(join.nnodes) != settings_.job.nnodes)
      return fmt::format("{} expects {} nodes but node 0 expects {}; give every node the same --nnodes",
                         node, join.nnodes, settings_.job.nnodes);
    if (static_cast<int>(join.spare_nodes) != settings_.job.spare_nodes)
      return fmt::format("{} expects {} spare nodes but node 0 expects {}; give every node the same "
                         "--spare-nodes (in Slurm: the same --nnodes in a step of as many nodes)",
                         node, join.spare_nodes, settings_.job.spare_nodes);
    if (join.min_nodes != 0 && static_cast<int>(join.min_nodes) != min_nodes())
      return fmt::format("{} goes on with at least {} nodes but node 0 with {}; give every node the "
                         "same --min-nodes",
                         node, join.min_nodes, min_nodes());
    if (rank < 0 || rank >= launcher_count() || join.nproc == 0)
      return fmt::format("{}: node rank {} is not in 0..{}; check --node-rank", node, rank,
                         launcher_count() - 1);
    for (const auto& [other_rank, other] : nodes_) {
      if (other_rank == rank || !launchers_.count(other_rank)) continue;
      if (other.nproc != static_cast<int>(join.nproc) && !(other.allow_uneven && join.allow_uneven))
        return fmt::format("{} runs {} worker{} but node {} ({}) runs {}; give every node the same "
                           "--nproc-per-node, or pass --allow-uneven to every node",
                           node, join.nproc, join.nproc == 1 ? "" : "s", other_rank, other.host,
                           other.nproc);
      break;  // all joined nodes already agree with each other
    }
    return std::nullopt;
  }

  void start_round() {
    std::vector<int> joined(joined_.begin(), joined_.end());
    Roster roster = choose_roster(joined, benched_, members_, settings_.service_slot, settings_.job.nnodes);
    World world;
    world.round = round_;
    world.run_id = settings_.job.run_id;
    set_worker_master(world, roster);
    world.ifnames.assign(static_cast<std::size_t>(launcher_count()), "");
    world.ifaddresses.assign(static_cast<std::size_t>(launcher_count()), "");
    for (int slot = 0; slot < launcher_count(); ++slot) {
      if (const auto* choice = survey_.choice(slot)) {
        world.ifnames[static_cast<std::size_t>(slot)] = choice->ifname;
        world.ifaddresses[static_cast<std::size_t>(slot)] = choice->address;
      }
    }
    world.heartbeat_timeout_ms = static_cast<int>(settings_.job.heartbeat_timeout.count());
    world.incarnation = settings_.incarnation;
    for (int slot : roster.node_slots) world.nproc_per_node.push_back(nodes_[slot].nproc);
    world.node_slots = roster.node_slots;
    world.spare_slots = roster.spare_slots;
    for (int slot : joined) {
      if (benched_.count(slot) > 0) world.benched_slots.push_back(slot);
    }
    world.addresses.assign(static_cast<std::size_t>(launcher_count()), "");
    for (const auto& [slot, info] : nodes_) {
      if (slot >= 0 && slot < launcher_count()) world.addresses[static_cast<std::size_t>(slot)] = info.address;
    }
    record_roster_change(roster);
    awaiting_spare_for_.reset();
    started_.clear();
    set_members(roster.node_slots);
    world_ = world;
    phase_ = Phase::kRunning;
    outcomes_.clear();
    auto now = util::Clock::now();
    round_start_ = now;
    hang_.begin_round(round_, static_cast<int>(members_.size()), now);
    broadcast(MessageType::kWorld, encode(world), nullptr);
  }

  // MASTER_ADDR and MASTER_PORT for the workers: node rank 0's host, at
  // the address of the interface chosen for it (which every host reached
  // when probed), and a port free there: picked here when node rank 0 is this
  // service's host, else the one its launcher found free when it joined.
  void set_worker_master(World& world, const Roster& roster) {
    int zero = roster.node_slots.empty() ? settings_.service_slot : roster.node_slots.front();
    const auto* choice = survey_.choice(zero);
    world.worker_master_addr = settings_.worker_master_addr;
    if (zero != settings_.service_slot && !nodes_[zero].address.empty()) world.worker_master_addr = nodes_[zero].address;
    if (choice) world.worker_master_addr = choice->address;
    if (zero != settings_.service_slot && nodes_[zero].free_port > 0) {
      world.worker_master_port = nodes_[zero].free_port;
      return;
    }
    world.worker_master_port = util::pick_free_port(zero == settings_.service_slot ? world.worker_master_addr : "0.0.0.0");
  }

  // ---- before a round: the network survey and the gate

  bool gate_pending() const { return gate_.pending() && !taking_over(); }

  // Once a round may start: first the hosts not yet surveyed are probed and
  // given their interface, then (round 0, --gate) the gate runs; then the
  // round starts. Each step ends by calling this again.
  void prepare_round() {
    if (pre_round_ != PreRound::kNone || phase_ != Phase::kJoining) return;
    std::vector<int> joined(joined_.begin(), joined_.end());
    if (settings_.job.survey_network && launcher_count() > 1) {
      auto targets = survey_.unsurveyed(joined);
      if (!targets.empty() && start_probes(joined, targets)) return;
    }
    if (round_ == 0 && gate_pending()) return start_gate(joined);
    start_round();
  }

  // Asks every launcher to probe; false when nothing can be probed (the
  // choices are then made at once).
  bool start_probes(const std::vector<int>& joined, const std::vector<int>& targets) {
    probe_targets_ = targets;
    auto requests = survey_.ask(joined, targets, round_);
    for (auto& [slot, request] : requests) {
      auto launcher = launchers_.find(slot);
      if (launcher == launchers_.end()) survey_.forget(slot);
      else send(*launcher->second, MessageType::kProbe, encode(request));
    }
    if (survey_.complete()) {
      settle_survey();
      return false;
    }
    pre_round_ = PreRound::kProbing;
    pre_round_timer_ = events_.at(util::Clock::now() + kProbeHandshakeTimeout + kProbeReportMargin, [this] {
      if (pre_round_ == PreRound::kProbing) finish_probes();
    });
    return true;
  }

  void on_probe_report(Peer& peer, const ProbeReportMessage& report) {
    if (pre_round_ != PreRound::kProbing || static_cast<int>(report.round) != round_) return;
    survey_.take_report(peer.slot, report);
    if (survey_.complete()) finish_probes();
  }

  void finish_probes() {
    events_.cancel(pre_round_timer_);
    pre_round_ = PreRound::kNone;
    settle_survey();
    maybe_start_round();
  }

  void settle_survey() {
    for (const auto& line : survey_.settle(probe_targets_)) {
      log(fmt::format("network: {}", line));
      network_lines_.push_back(line);
    }
  }

  // Every launcher that came runs the check as one gate rank, node 0's
  // host first (it hosts the check's store).
  void start_gate(const std::vector<int>& joined) {
    std::vector<int> slots;
    if (joined_.count(settings_.service_slot) > 0) slots.push_back(settings_.service_slot);
    for (int slot : joined) {
      if (slot != settings_.service_slot && benched_.count(slot) == 0) slots.push_back(slot);
    }
    const auto* own = survey_.choice(settings_.service_slot);
    std::string master = own ? own->address : settings_.worker_master_addr;
    int port = 0;
    try {
      port = util::pick_free_port(master);
    } catch (const util::SystemError& error) {
      return abort_job(fmt::format("the gate cannot start: {}", error.what()), nullptr, -1);
    }
    pre_round_ = PreRound::kGating;
    gate_.start(std::move(slots), master, port, survey_, round_);
    pre_round_timer_ = events_.at(util::Clock::now() + settings_.job.gate.timeout + kGateReportMargin, [this] {
      if (pre_round_ == PreRound::kGating) finish_gate();
    });
  }

  void on_gate_report(Peer& peer, const GateReportMessage& report) {
    if (pre_round_ == PreRound::kGating && gate_.take_report(peer.slot, report)) finish_gate();
  }

  // Benches what the gate found bad and starts round 0 on the healthy
  // nodes, or stops the job when too few are left.
  void finish_gate() {
    events_.cancel(pre_round_timer_);
    pre_round_ = PreRound::kNone;
    GateFinding finding = gate_.finish(launcher_count(), network_lines_);
    const std::string report = finding.saved.empty() ? "" : fmt::format(" (report: {})", finding.saved);
    for (const auto& line : summary_lines(finding.summary)) log(fmt::format("gate: {}", line));
    if (!finding.saved.empty()) log(fmt::format("gate: the full report is in {}", finding.saved));
    for (const auto& node : finding.result.nodes) {
      if (!node.benched || benched_.count(node.slot) > 0) continue;
      benched_.insert(node.slot);
      add_to_timeline(fmt::format("gate: {} (slot {}) benched: {}", node.host, node.slot, node.why));
    }
    // Failed everywhere with nobody to blame: not a node's fault (a
    // firewall, a missing dlaunch-check), and training would fail alike.
    if (!finding.result.problem.empty())
      return abort_job(fmt::format("the gate stopped the job: {}{}", finding.result.problem, report), nullptr, -1);
    int eligible = 0;
    for (int slot : joined_) eligible += benched_.count(slot) == 0 ? 1 : 0;
    if (eligible < min_nodes())
      return abort_job(fmt::format("the gate left {} healthy node{} and the job needs {}{}: {}{}", eligible,
                                   eligible == 1 ? "" : "s", min_nodes(),
                                   settings_.job.min_nodes > 0 ? " (--min-nodes)" : "",
                                   fmt::join(summary_lines(finding.summary), "; "), report),
                       nullptr, -1);
    prepare_round();
  }

  // ---- what the gate asks of the loop (service/gate_step.h)

  Peer* launcher(int slot) override {
    auto found = launchers_.find(slot);
    return found == launchers_.end() ? nullptr : found->second;
  }

  std::string host_of(int slot) override {
    auto node = nodes_.find(slot);
    if (node != nodes_.end()) return node->second.host;
    if (static_cast<std::size_t>(slot) < settings_.job.expected_hosts.size())
      return settings_.job.expected_hosts[static_cast<std::size_t>(slot)];
    return "";
  }

  // Says who trains: in round 0 which launchers stand by; later, which
  // launcher took which lost node's place (said, with how long the job was
  // down, once every worker of the round runs: on_started).
  void record_roster_change(const Roster& roster) {
    if (round_ == 0) {
      for (int slot : roster.spare_slots)
        log(fmt::format("{} (slot {}) is a spare: it stands by", nodes_[slot].host, slot));
      return;
    }
    std::vector<std::string> hosts(static_cast<std::size_t>(launcher_count()));
    for (const auto& [slot, node] : nodes_) {
      if (slot >= 0 && slot < launcher_count()) hosts[static_cast<std::size_t>(slot)] = node.host;
    }
    recovery_.replaced(round_, settings_.job.max_restarts,
                       roster_changes(roster, members_, hosts, settings_.job.nnodes, min_nodes()));
  }

  void say_replacement(std::optional<util::Clock::time_point> all_running) {
    if (auto line = recovery_.round_running(all_running)) log(*line);
  }

  // A launcher's workers of this round all run.
  void on_started(Peer& peer) {
    if (phase_ != Phase::kRunning || !member_rank(peer.slot)) return;
    started_.insert(peer.slot);
    if (started_.size() == members_.size()) say_replacement(util::Clock::now());
  }

  void add_to_timeline(const std::string& event) override { recovery_.add(event); }

  void on_failure(Peer& peer, const Failure& failure) {
    if (phase_ != Phase::kRunning || !member_rank(peer.slot)) return;
    record_failure(failure, &peer);
  }

  // The job's first failure makes every other node stop its workers.
  void record_failure(const Failure& failure, Peer* reporter) {
    failures_.push_back(failure);
    if (first_failure_) return;
    first_failure_ = failure;
    recovery_.failure_noticed(util::Clock::now());
    std::string reason = failure.node_rank < 0 ? describe_failure(failure)  // a hang: the job's, no node's
                                               : fmt::format("the job failed on node {}: {}", failure.node_rank,
                                                             describe_failure(failure));
    broadcast(MessageType::kStop, encode(TextMessage{static_cast<std::uint32_t>(round_), reason}),
              reporter, true);
  }

  void on_outcome(Peer& peer, const OutcomeMessage& message) {
    auto rank = member_rank(peer.slot);
    if (phase_ != Phase::kRunning || !rank || static_cast<int>(message.round) != round_) return;
    const NodeOutcome& outcome = message.outcome;
    if (outcome.failure) {
      // The first failure's own node knows its last lines; prefer that account.
      bool same = first_failure_ && first_failure_->node_rank == outcome.failure->node_rank &&
                  first_failure_->global_rank == outcome.failure->global_rank;
      if (same) first_failure_ = outcome.failure;
      if (!replace_account(*outcome.failure) && !same) record_failure(*outcome.failure, &peer);
    }
    outcomes_[*rank] = outcome;
    hang_.node_gone(*rank, fmt::format("the workers of {} had all exited", name(peer)));
    if (outcomes_.size() == members_.size()) decide();
  }

  // A node's outcome tells its failure in full (last lines, error file),
  // and may name another of its ranks as its root than the one it
  // announced: that account takes the announced one's place in the order
  // of failures. False when the node announced none.
  bool replace_account(const Failure& failure) {
    for (auto& known : failures_) {
      if (known.node_rank != failure.node_rank || known.global_rank < 0) continue;
      known = failure;
      return true;
    }
    return false;
  }

  // The round's root failure: the first that is not a cascade.
  std::optional<Failure> root_failure() const {
    if (failures_.empty()) return first_failure_;
    return failures_[doctor::choose_root(failures_).root];
  }

  void on_disconnect(Peer& peer) {
    lose(peer, fmt::format("lost contact with the launcher of {}: it exited or was killed", name(peer)),
         util::Clock::now());
  }

  // ---- fencing: a launcher dropped while unreachable, a service that was

  // Every wake of the service's loop: a long gap between two means this
  // launcher (and its service) did not run. Silence is then counted from
  // here, and links that close right after are judged against it.
  void wake(util::Clock::time_point now) {
    auto stalled = stall_.look(now);
    if (!stalled || phase_ == Phase::kDone) return;
    log(fmt::format("node 0's launcher did not run for {:.1f} s (its host froze or it was stopped); the "
                    "other launchers' silence counts from now",
                    std::chrono::duration<double>(*stalled).count()));
  }

  // True when a stall of this service just ended that was long enough for
  // the other launchers to count node 0 lost meanwhile.
  bool just_resumed_from_a_long_stall(util::Clock::time_point now) const {
    auto stall = stall_.recent(now, 2 * settings_.job.heartbeat_timeout);
    return stall && stall->length >= settings_.job.heartbeat_timeout - heartbeat_interval(settings_.job.heartbeat_timeout);
  }

  // A launcher gone silent may be frozen or cut off rather than gone, and
  // come back: it is told, before its connection closes, that the job goes
  // on without it (a launcher stops at once when it reads this), and a
  // later Join of its is refused.
  void lose_silent(Peer& peer, const std::string& description) {
    if (peer.slot >= 0) {
      dropped_[peer.slot] = fmt::format("node 0 dropped it in round {}: {}", round_, description);
      send(peer, MessageType::kFenced,
           encode(TextMessage{static_cast<std::uint32_t>(round_),
                              fmt::format("node 0 dropped this launcher in round {} ({}); the job goes on "
                                          "without it",
                                          round_, description)}));
    }
    lose(peer, description, peer.connection.last_heard());
  }

  // This service did not run for a while, and meanwhile every other
  // launcher left it: they counted node 0 lost and moved the rendezvous on
  // (a take-over) or decided the job without it. Whatever it would decide
  // now is stale: it decides nothing, tells its own launcher to stop at
  // once, and refuses everyone from here on.
  void depose(util::Clock::time_point now) {
    deposed_ = true;
    auto stall = stall_.recent(now, 2 * settings_.job.heartbeat_timeout);
    std::string reason = fmt::format(
        "node 0's launcher did not run for {:.1f} s (its host froze or it was stopped), and every "
        "other launcher left it meanwhile: the job went on without it in a later round, or ended",
        stall ? std::chrono::duration<double>(stall->length).count() : 0.0);
    deposed_reason_ = reason;
    log(reason + "; this node decides nothing and stops");
    add_to_timeline(reason);
    phase_ = Phase::kDone;
    for (auto& [slot, peer] : launchers_snapshot()) fence(*peer, reason);
  }

  void fence(Peer& peer, const std::string& reason) {
    send(peer, MessageType::kFenced, encode(TextMessage{static_cast<std::uint32_t>(round_), reason}));
  }

  bool only_own_launcher_left() const {
    for (const auto& [slot, peer] : launchers_) {
      if (slot != settings_.service_slot) return false;
    }
    return true;
  }

  // PEER's node is gone (closed, silent, or not reading): in a running
  // round that is the job's failure. LAST_ALIVE: its last sign of life,
  // where the job's down time counts from.
  void lose(Peer& peer, const std::string& description, util::Clock::time_point last_alive) {
    int slot = peer.slot;
    auto rank = member_rank(slot);
    table_.close(peer);
    if (slot < 0 || phase_ == Phase::kDone) return;
    auto now = util::Clock::now();
    if (slot != settings_.service_slot && just_resumed_from_a_long_stall(now) && only_own_launcher_left())
      return depose(now);
    if (pre_round_ == PreRound::kProbing) {
      survey_.forget(slot);
      if (survey_.complete()) events_.at(util::Clock::now(), [this] {
        if (pre_round_ == PreRound::kProbing) finish_probes();
      });
    }
    if (phase_ == Phase::kJoining || !rank) {
      // A launcher without workers in this round: one candidate fewer. While
      // the nodes gather, the job waits for its slot again: worth a line.
      if (settings_.job.spare_nodes > 0 || phase_ == Phase::kJoining) {
        log(description);
        add_to_timeline(description);
      }
      if (phase_ == Phase::kJoining) maybe_start_round();
      return;
    }
    hang_.node_gone(*rank, description);
    if (outcomes_.count(*rank) > 0) return;
    Failure lost;
    lost.node_rank = *rank;
    lost.host = peer.host;
    lost.description = description;
    ++losses_[slot];
    log(lost.description);
    add_to_timeline(description);
    recovery_.fault(last_alive);
    record_failure(lost, &peer);
    NodeOutcome outcome;
    outcome.failure = lost;
    lost_node_ = true;
    outcomes_[*rank] = outcome;
    if (outcomes_.size() == members_.size()) decide();
  }

  void decide() {
    hang_.end_round();
    say_replacement(std::nullopt);
    bool benched = bench_repeat_failer();
    RoundEnd end{{}, root_failure(), lost_node_ || benched, round_, settings_.job.max_restarts};
    for (const auto& [rank, outcome] : outcomes_) end.outcomes.push_back(outcome);
    // A node benched for failing round after round gives the next round
    // other hardware: that is worth the attempt.
    if (!benched) judge_repeat(end);
    end.nodes_left = candidates_left();
    end.min_nodes = min_nodes();
    // Launchers gone silent may live on the other side of a cut: this side
    // goes on only with more than half of those it had.
    // This side then stops; when the other side may carry the job on (it
    // can replace a node, and has a restart left), this side steps aside:
    // its launchers write none of the job's records (Verdict::stepped_aside).
    bool minority = silent_losses_ > 0 && 2 * end.nodes_left <= end.nodes_left + silent_losses_;
    // A spare not joined yet may still replace a lost node: the next round
    // waits for it until the join deadline.
    end.nodes_left = minority ? 0 : end.nodes_left + spares_on_their_way();
    Verdict verdict = decide_verdict(end);
    if (minority && verdict.kind == Verdict::Kind::kFailed && job_may_go_on_elsewhere()) {
      verdict.stepped_aside = true;
      verdict.not_restarted = fmt::format(
          "{} launcher(s) went silent at once and only {} remain here: this node may be the one cut "
          "off, so it stops and leaves the job to the others",
          silent_losses_, candidates_left());
    }
    if (!verdict.not_restarted.empty()) {
      log(verdict.not_restarted);
      add_to_timeline(verdict.not_restarted);
    }
    verdict.timeline = recovery_.timeline();
    broadcast(MessageType::kVerdict,
              encode(VerdictMessage{static_cast<std::uint32_t>(round_), verdict}), nullptr);
    if (verdict.kind != Verdict::Kind::kRestart) {
      phase_ = Phase::kDone;
      return;
    }
    ++round_;
    phase_ = Phase::kJoining;
    arm_join_deadline();
    joined_.clear();
    outcomes_.clear();
    first_failure_.reset();
    failures_.clear();
    lost_node_ = false;
    silent_losses_ = 0;
  }

  // With --retry-repeated-failures unset, a failure that repeats the last
  // round's with no progress ends the job (doctor/repeat_guard.h).
  void judge_repeat(RoundEnd& end) {
    bool failed = std::any_of(end.outcomes.begin(), end.outcomes.end(),
                              [](const NodeOutcome& outcome) { return !outcome.succeeded; });
    if (!settings_.job.stop_repeated_failures || !failed) return;
    double seconds = std::chrono::duration<double>(util::Clock::now() - round_start_).count();
    // How far the job got: the furthest node's highest step (none when no
    // node reported one: then time to failure is the measure).
    std::optional<std::int64_t> step;
    for (const auto& outcome : end.outcomes) {
      if (outcome.top_step) step = std::max(step.value_or(*outcome.top_step), *outcome.top_step);
    }
    end.repeated = repeats_.judge(end.first_failure, round_, seconds, step);
  }

  // Launchers on the far side of a cut could take the rendezvous over and
  // go on: the job replaces lost nodes (spares, --min-nodes) and has a
  // restart left.
  bool job_may_go_on_elsewhere() const {
    return (settings_.job.spare_nodes > 0 || min_nodes() < settings_.job.nnodes) && round_ < settings_.job.max_restarts;
  }

  // Whether one more launcher can be benched and the job still train: a
  // spare takes its place (one connected, or one on its way, waited for
  // until the next round's join deadline), or --min-nodes lets the job
  // shrink.
  bool one_can_go() const { return candidates_left() - 1 + spares_on_their_way() >= std::max(1, min_nodes()); }
  // The same, counting only the launchers connected now.
  bool one_can_go_now() const { return candidates_left() - 1 >= std::max(1, min_nodes()); }

  // Launchers that could train in the next round: connected, not benched.
  int candidates_left() const {
    int count = 0;
    for (const auto& [slot, peer] : launchers_) count += benched_.count(slot) == 0 ? 1 : 0;
    return count;
  }

  // Benches SLOT, for WHAT. When only a spare on its way can take its
  // place, the round gathering waits for it and its join deadline stops
  // the job with WHAT: then the clause that says so (WAIT: the gathering's
  // time left), to end the caller's line; else "".
  std::string bench(int slot, const std::string& what, util::Clock::duration wait) {
    const bool replaceable_now = one_can_go_now();
    benched_.insert(slot);
    if (replaceable_now) return "";
    awaiting_spare_for_ = what;
    return fmt::format("; the round waits up to {} s for a spare that has not joined yet ({} of --spare-nodes {})",
                       std::chrono::duration_cast<std::chrono::seconds>(wait).count(), spares_on_their_way(),
                       settings_.job.spare_nodes);
  }

  // The node where the job's first failure began has now failed
  // --node-fail-limit rounds in a row (a bad GPU, a bad disk), or once with
  // a hardware kind (an Xid, an uncorrectable ECC error: doctor/
  // failure_signature.h): it is benched, if another launcher can take its
  // place or the job may shrink (--min-nodes); without either it keeps its
  // place, as without spares. True when a node was benched.
  bool bench_repeat_failer() {
    const std::optional<Failure> root = root_failure();
    std::optional<doctor::Diagnosis> hardware;
    if (slot_of_node(root)) {
      if (auto diagnosis = doctor::diagnose(*root); doctor::is_hardware(diagnosis.kind)) hardware = diagnosis;
    }
    const std::optional<int> failed_slot = hardware ? slot_of_node(root) : slot_of_node(first_failure_);
    for (int slot : members_) {
      if (slot != failed_slot) failure_streaks_.erase(slot);
    }
    const int limit = hardware ? 1 : settings_.job.node_fail_limit;
    if (!failed_slot || limit <= 0) return false;
    int streak = ++failure_streaks_[*failed_slot];
    if (streak < limit || launchers_.count(*failed_slot) == 0 || !one_can_go()) return false;
    std::string event =
        hardware ? fmt::format("{} had a GPU hardware error ({}): it is benched", name(*launchers_[*failed_slot]),
                               doctor::short_name(*hardware))
                 : fmt::format("{} failed {} rounds in a row (--node-fail-limit {}): it is benched",
                               name(*launchers_[*failed_slot]), streak, settings_.job.node_fail_limit);
    // Decided at the round's end: the next gathering has the whole timeout.
    event += bench(*failed_slot, event, settings_.job.join_timeout);
    log(event);
    add_to_timeline(event);
    return true;
  }

  // The slot of the node where FAILURE happened, when it was a worker's.
  std::optional<int> slot_of_node(const std::optional<Failure>& failure) const {
    if (!failure || failure->global_rank < 0 || failure->node_rank < 0 ||
        failure->node_rank >= static_cast<int>(members_.size()))
      return std::nullopt;
    return members_[static_cast<std::size_t>(failure->node_rank)];
  }

  // SLOT's node was lost kLossesToBench times in this job (a host that
  // freezes or drops off the network again and again): when its launcher
  // joins again it is benched, if another launcher can take its place;
  // without one it keeps its place, as without spares.
  void bench_flaky(int slot, const JoinMessage& join) {
    auto losses = losses_.find(slot);
    if (benched_.count(slot) > 0 || losses == losses_.end() || losses->second < kLossesToBench) return;
    const std::string what =
        fmt::format("node {} ({}) was lost {} times in this job", slot, join.host, losses->second);
    if (!one_can_go()) {
      log(fmt::format("{}; it keeps its place: no spare is left to take it (--spare-nodes)", what));
      return;
    }
    const std::string waiting = bench(slot, what, join_time_left());
    log(fmt::format("{}; it is benched and another launcher takes its place{}", what, waiting));
    add_to_timeline(fmt::format("{} (slot {}) benched: lost {} times", join.host, slot, losses->second));
  }

  // SLOT's launcher failed a health check between rounds (JOIN's
  // health_error): benched as the gate benches a bad node, when enough
  // launchers are left to train (spares, --min-nodes); else the job stops,
  // naming it. False when the job stopped.
  bool bench_unhealthy(int slot, const JoinMessage& join) {
    if (benched_.count(slot) > 0) return true;  // benched before: it stays so
    const std::string what = fmt::format("node {} ({}) failed its health check before round {}: {}", slot,
                                         join.host, join.round, join.health_error);
    if (!one_can_go()) {
      abort_job(fmt::format("{}. No spare is left to take its place and the job needs {} node(s) (--min-nodes), "
                            "so it stops; fix or replace that node, or give --spare-nodes",
                            what, std::max(1, min_nodes())),
                nullptr, -1);  // its launcher holds SLOT now: told with every launcher
      return false;
    }
    const bool spare_left = candidates_left() - 1 + spares_on_their_way() >= settings_.job.nnodes;
    const std::string waiting = bench(slot, what, join_time_left());
    log(fmt::format("{}; it is benched{}", what,
                    !waiting.empty() ? waiting
                    : spare_left     ? " and a spare takes its place"
                                     : " and the job goes on with fewer nodes (--min-nodes)"));
    add_to_timeline(fmt::format("health check: {} (slot {}) benched: {}", join.host, slot, join.health_error));
    return true;
  }

  // What is left of this gathering's --rdzv-timeout.
  util::Clock::duration join_time_left() const {
    return std::max<util::Clock::duration>(util::Clock::duration::zero(),
                                           gathering_since_ + settings_.job.join_timeout - util::Clock::now());
  }

  void abort_missing() {
    if (awaiting_spare_for_) {
      return abort_job(
          fmt::format("{}. No spare took its place within {} s (--rdzv-timeout; slot(s) {} never joined) and the "
                      "job needs {} node(s) (--min-nodes), so it stops; fix or replace that node, or check why "
                      "the spare's launcher did not start",
                      *awaiting_spare_for_,
                      std::chrono::duration_cast<std::chrono::seconds>(settings_.job.join_timeout).count(),
                      fmt::join(slots_never_joined(), ", "), std::max(1, min_nodes())),
          nullptr, -1);
    }
    std::vector<std::string> missing;
    std::vector<std::string> refusals;
    for (int rank = 0; rank < launcher_count(); ++rank) {
      if (joined_.count(rank) > 0) continue;
      missing.push_back(std::to_string(rank));
      if (auto refused = refused_ranks_.find(rank); refused != refused_ranks_.end())
        refusals.push_back(refused->second);
    }
    // A launcher refused before it had a node rank (by arrival) may be the missing one.
    if (auto refused = refused_ranks_.find(-1); refused != refused_ranks_.end()) refusals.push_back(refused->second);
    std::string reason = fmt::format(
        "rendezvous timed out after {} s: {}/{} nodes joined; missing node rank(s): {}{}. Start "
        "dlaunch run on those nodes, or check --nnodes, --master-addr and --master-port",
        std::chrono::duration_cast<std::chrono::seconds>(settings_.job.join_timeout).count(),
        joined_.size(), settings_.job.nnodes, fmt::join(missing, ", "),
        refusals.empty() ? "" : fmt::format(" ({})", fmt::join(refusals, "; ")));
    abort_job(reason, nullptr, -1);
  }

  // The job cannot start: every joined node, and any that joins later while
  // this service lives, is told REASON.
  void abort_job(const std::string& reason, Peer* trigger, int trigger_rank) {
    log(reason);
    abort_reason_ = reason;
    phase_ = Phase::kDone;
    for (auto& [rank, peer] : launchers_snapshot()) tell_abort(*peer, rank);
    if (trigger != nullptr && !trigger->closed) tell_abort(*trigger, trigger_rank);
  }

  void tell_abort(Peer& peer, int rank) {
    send(peer, MessageType::kAbort, encode(TextMessage{static_cast<std::uint32_t>(round_), *abort_reason_}));
    if (rank >= 0 && rank < launcher_count()) {
      std::lock_guard lock(told_mutex_);
      told_.insert(rank);
    }
    told_changed_.notify_all();
  }

  // ---- hang forensics (service/hang_duty.h): what the duty asks of the loop

  void broadcast_to_members(MessageType type, const std::string& payload) override {
    broadcast(type, payload, nullptr, true);
  }

  std::map<int, CaptureNode> capture_nodes() override {
    std::map<int, CaptureNode> nodes;
    for (int rank = 0; rank < static_cast<int>(members_.size()); ++rank) {
      int slot = members_[static_cast<std::size_t>(rank)];
      CaptureNode& node = nodes[rank];
      node.asked = AskedNode{nodes_[slot].host, world_.rank_offset(rank),
                             world_.nproc_per_node[static_cast<std::size_t>(rank)]};
      if (launchers_.count(slot) == 0) node.absent = fmt::format("node {} was lost", rank);
      else if (outcomes_.count(rank) > 0) node.absent = fmt::format("the workers of node {} had all exited", rank);
    }
    return nodes;
  }

  void fail_for_hang(const Failure& failure) override {
    if (phase_ == Phase::kRunning && !first_failure_) record_failure(failure, nullptr);
  }

  void on_progress(Peer& peer, const ProgressMessage& message) {
    auto rank = member_rank(peer.slot);
    if (phase_ == Phase::kRunning && rank) hang_.on_progress(*rank, peer.host, world_, message);
  }

  void on_stacks(Peer& peer, const StacksMessage& message) {
    if (auto rank = member_rank(peer.slot)) hang_.on_stacks(*rank, message);
  }

  // `dlaunch stacks`: proved like a launcher (the token), it is never one.
  void on_observer(Peer& peer, const JoinMessage& join) {
    peer.host = fmt::format("dlaunch stacks at {}", peer.connection.address());
    if (!join.run_id.empty() && join.run_id != settings_.job.run_id)
      return refuse(peer, fmt::format("refused {}: it asked for job '{}', this rendezvous serves job '{}'", peer.host,
                                      join.run_id, settings_.job.run_id),
                    fmt::format("this rendezvous serves job '{}', not '{}'", settings_.job.run_id, join.run_id));
    if (phase_ != Phase::kRunning) {
      send(peer, MessageType::kStacksEnd,
           encode(TextMessage{static_cast<std::uint32_t>(round_),
                              fmt::format("no workers run now: the job is {}", phase_name())}));
      return;
    }
    log(fmt::format("{} asked for every worker's stack (the job goes on)", peer.host));
    hang_.observe(peer);
  }

  void on_tick(util::Clock::time_point now) {
    wake(now);
    if (phase_ == Phase::kDone && deposed_) return;
    hang_.check(now, phase_ == Phase::kRunning && !first_failure_);
    bool beat = now - last_heartbeat_ >= heartbeat_interval(settings_.job.heartbeat_timeout);
    if (beat) last_heartbeat_ = now;
    table_.for_each_open([&](Peer& peer) {
      if (table_.close_if_handshake_overdue(peer, now) || !peer.authenticated || went_silent(peer, now)) return;
      if (beat) table_.send_frame(peer, peer.session.frame(MessageType::kHeartbeat, "", generation()), now);
    });
  }

  // Loses PEER, a launcher that proved itself, when it went silent or
  // stopped reading. True when it was lost.
  bool went_silent(Peer& peer, util::Clock::time_point now) {
    auto limit = settings_.job.heartbeat_timeout;
    auto seconds = std::chrono::duration_cast<std::chrono::seconds>(limit).count();
    // Silence is counted while this service ran: across its own stall every
    // peer was silent for it at once (a whole job suspended and resumed).
    const auto heard = std::max(peer.connection.last_heard(), stall_.resumed());
    if (now - heard > limit) {
      ++silent_losses_;
      lose_silent(peer, fmt::format("{} sent nothing for {} s (--heartbeat-timeout): its host may "
                                    "be down, its network cut, or its launcher frozen",
                                    name(peer), seconds));
      return true;
    }
    if (peer.connection.has_backlog() &&
        now - std::max(peer.connection.backlog_since(), stall_.resumed()) > limit) {
      ++silent_losses_;
      lose_silent(peer, fmt::format("{} read nothing from node 0 for {} s (--heartbeat-timeout): "
                                    "its launcher is stuck or its network cut",
                                    name(peer), seconds));
      return true;
    }
    return false;
  }

  // To every launcher of the job (MEMBERS_ONLY: those with workers this
  // round); each copy is sealed with its peer's own session keys.
  void broadcast(MessageType type, const std::string& payload, const Peer* except,
                 bool members_only = false) {
    auto now = util::Clock::now();
    for (auto& [slot, peer] : launchers_snapshot()) {
      if (members_only && !member_rank(slot)) continue;
      if (peer != except && !peer->closed)
        table_.send_frame(*peer, peer->session.frame(type, payload, generation()), now);
    }
  }

  // A send that fails closes its peer, which leaves launchers_: loops that
  // send walk a copy.
  std::vector<std::pair<int, Peer*>> launchers_snapshot() const {
    return {launchers_.begin(), launchers_.end()};
  }

  void send(Peer& peer, MessageType type, const std::string& payload) override {
    if (peer.closed) return;
    table_.send_frame(peer, peer.session.frame(type, payload, generation()), util::Clock::now());
  }

  struct NodeInfo {
    int nproc = 0;
    bool allow_uneven = false;
    std::string host;
    std::string address;  // as node 0 reached it
    int free_port = 0;    // a port its launcher found free, for MASTER_PORT
  };

  ServerSettings settings_;
  process::EventLoop events_;
  PeerTable table_;
  Phase phase_ = Phase::kJoining;
  // What runs between the end of a round's gathering and its World.
  enum class PreRound { kNone, kProbing, kGating };
  PreRound pre_round_ = PreRound::kNone;
  process::EventLoop::Timer pre_round_timer_;
  NetworkSurvey survey_;
  std::vector<int> probe_targets_;
  std::vector<std::string> network_lines_;  // every choice made, for the gate's report
  bool gate_arrival_passed_ = false;
  int round_ = 0;
  process::EventLoop::Timer join_deadline_;
  process::EventLoop::Timer waiting_line_;
  util::Clock::time_point gathering_since_;  // when round_ began to gather
  std::chrono::milliseconds next_waiting_line_{0};  // due this long after gathering_since_
  std::chrono::milliseconds tick_;
  util::Clock::time_point last_heartbeat_;
  std::map<int, Peer*> launchers_;  // every launcher that joined and is still connected, by slot
  std::set<int> joined_;            // the slots that joined round_
  std::vector<int> members_;        // the slot of each node rank, this round (or the last): set_members()
  std::unordered_map<int, int> rank_of_slot_;  // members_ inverted: each slot's node rank
  World world_;                     // the current round's
  std::set<int> benched_;
  std::map<int, int> failure_streaks_;  // by slot: rounds in a row its node failed first
  // By slot: times its launcher was lost while it trained. Not by host: the
  // launchers of a test (or of several slots on one big host) share one.
  std::map<int, int> losses_;
  std::set<int> started_;         // the slots whose workers of this round run
  process::StallWatch stall_;     // this service's own stalls
  std::map<int, std::string> dropped_;  // slots dropped for silence, and why
  bool deposed_ = false;          // the job went on without this service
  std::string deposed_reason_;
  RecoveryLog recovery_;          // the timeline every verdict carries, and the down times
  std::map<int, NodeInfo> nodes_;
  std::map<int, std::string> refused_ranks_;
  std::map<int, NodeOutcome> outcomes_;
  std::optional<Failure> first_failure_;
  std::vector<Failure> failures_;  // this round's, in the order they arrived
  doctor::RepeatGuard repeats_;
  util::Clock::time_point round_start_{};  // when this round's workers were told to start
  std::optional<std::string> abort_reason_;
  // Why this gathering waits for a spare that has not joined yet (the
  // bench() that only such a spare can fill), for the join deadline's error.
  std::optional<std::string> awaiting_spare_for_;
  bool lost_node_ = false;
  int silent_losses_ = 0;  // launchers of this round lost to silence, not a closed connection
  bool grace_passed_ = false;
  std::mutex told_mutex_;
  std::condition_variable told_changed_;
  std::set<int> told_;
  HangDuty hang_;
  GateStep gate_;
};

RendezvousServer::RendezvousServer(util::Fd listener, ServerSettings settings)
    : loop_(std::make_unique<Loop>(std::move(listener), std::move(settings))),
      thread_([this] { loop_->run(); }) {}

RendezvousServer::~RendezvousServer() {
  loop_->stop();
  thread_.join();
}

bool RendezvousServer::wait_until_all_told(std::chrono::steady_clock::time_point deadline) {
  return loop_->wait_until_all_told(deadline);
}

}  // namespace dlaunch::rendezvous
