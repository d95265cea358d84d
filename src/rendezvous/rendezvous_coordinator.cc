#include "rendezvous/rendezvous_coordinator.h"

#include <algorithm>
#include <cerrno>
#include <fmt/format.h>
#include <poll.h>
#include <random>
#include <sys/socket.h>

#include "launch/local_coordinator.h"
#include "rendezvous/protocol.h"
#include "rendezvous/rendezvous_server.h"
#include "rendezvous/token.h"
#include "util/error.h"
#include "util/socket.h"

namespace dlaunch {
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

long long seconds_of(milliseconds duration) {
  return std::chrono::duration_cast<std::chrono::seconds>(duration).count();
}

class RendezvousCoordinator : public Coordinator {
 public:
  RendezvousCoordinator(RendezvousSettings settings, SignalChannel& signals)
      : settings_(std::move(settings)), signals_(signals),
        heartbeat_timeout_(settings_.heartbeat_timeout) {
    if (settings_.node_rank == 0) start_service();
  }

  World join(int round) override {
    auto deadline = Clock::now() + settings_.timeout;
    if (!socket_) connect_and_greet(deadline);
    send_join(round, mismatch_problem_);
    // The service enforces the join deadline and names the missing nodes;
    // the margin only guards against a service that went silent.
    Frame frame = wait_for_frame(deadline + kAnswerMargin, "the world");
    if (frame.type == MessageType::kAbort)
      throw SystemError(rendezvous::decode_text(frame.payload).reason);
    if (frame.type != MessageType::kWorld)
      throw SystemError("the rendezvous service sent an unexpected message while nodes joined");
    round_ = round;
    World world = rendezvous::decode_world(frame.payload);
    if (world.heartbeat_timeout_ms > 0) heartbeat_timeout_ = milliseconds(world.heartbeat_timeout_ms);
    return world;
  }

  void report_preflight_failure(const std::string& problem) override {
    auto deadline = Clock::now() + std::min<milliseconds>(settings_.timeout, kPreflightReportLimit);
    try {
      if (!socket_) connect_and_greet(deadline);
      send_join(0, problem);
      if (service_) wait_until_all_told(Clock::now() + settings_.timeout);
      else wait_for_frame(deadline, "node 0's answer");
    } catch (const SystemError&) {
      // Best effort: the problem itself is what this node reports.
    } catch (const Interrupted&) {
    }
  }

  int event_fd() const override { return socket_.get(); }

  std::optional<Clock::time_point> next_deadline() const override {
    if (!socket_ || lost_) return std::nullopt;
    return std::min(last_sent_ + heartbeat_interval(heartbeat_timeout_),
                    last_heard_ + heartbeat_timeout_);
  }

  std::optional<std::string> poll_stop_request() override {
    if (!socket_ || lost_) return std::nullopt;
    bool connected = receive_available();
    while (auto frame = next_frame()) {
      if (frame->type == MessageType::kStop || frame->type == MessageType::kAbort)
        return rendezvous::decode_text(frame->payload).reason;
      pending_.push_back(std::move(*frame));
    }
    if (!connected) return lost_message();
    if (auto silence = keep_heartbeat()) return silence;
    return std::nullopt;
  }

  void announce_failure(const Failure& failure) override {
    if (socket_) send(MessageType::kFailure, rendezvous::encode(failure));
  }

  Verdict finish(const NodeOutcome& outcome) override {
    send(MessageType::kOutcome,
         rendezvous::encode(rendezvous::OutcomeMessage{static_cast<std::uint32_t>(round_), outcome}));
    try {
      for (;;) {
        Frame frame = wait_for_frame(std::nullopt, "the job's verdict");
        if (frame.type == MessageType::kVerdict) return rendezvous::decode_verdict(frame.payload).verdict;
        // A Stop that crossed our Outcome on the wire needs no action now.
      }
    } catch (const SystemError& error) {
      // Node 0 is gone: this node decides alone, and never restarts.
      Verdict verdict = decide_verdict(outcome, round_, 0);
      if (!verdict.failure) {
        Failure lost;
        lost.node_rank = 0;
        lost.description = error.what();
        verdict.failure = lost;
        verdict.kind = Verdict::Kind::kFailed;
        verdict.exit_code = 1;
      }
      return verdict;
    } catch (const Interrupted& interrupted) {
      Verdict verdict = decide_verdict(outcome, round_, 0);
      verdict.kind = Verdict::Kind::kFailed;
      if (verdict.exit_code == 0) verdict.exit_code = 128 + interrupted.signal;
      return verdict;
    }
  }

 private:
  void start_service() {
    Fd listener;
    try {
      listener = listen_tcp(settings_.port);
    } catch (const SystemError& error) {
      throw SystemError(fmt::format(
          "node 0 cannot host the rendezvous on port {}: {}. Another job may be using it; choose "
          "another with --master-port",
          settings_.port, error.what()));
    }
    rendezvous::ServerSettings server;
    server.nnodes = settings_.nnodes;
    server.run_id = settings_.run_id;
    server.worker_master_addr = settings_.master_addr;
    server.max_restarts = settings_.max_restarts;
    server.join_timeout = settings_.timeout;
    server.token = settings_.token;
    server.heartbeat_timeout = settings_.heartbeat_timeout;
    service_ = std::make_unique<rendezvous::RendezvousServer>(std::move(listener), server);
  }

  // Connects to the service and takes its challenge. A token mismatch that
  // only this node can see is kept as a preflight problem for the Join.
  void connect_and_greet(Clock::time_point deadline) {
    connect_until(deadline);
    Frame frame = wait_for_frame(deadline + kAnswerMargin, "node 0's greeting");
    if (frame.type == MessageType::kAbort)
      throw SystemError(rendezvous::decode_text(frame.payload).reason);
    if (frame.type != MessageType::kChallenge)
      throw SystemError("the rendezvous service did not greet this node with a challenge; run the "
                        "same dlaunch version on every node");
    auto challenge = rendezvous::decode_challenge(frame.payload);
    challenge_ = challenge.nonce;
    if (challenge.heartbeat_timeout_ms > 0) heartbeat_timeout_ = milliseconds(challenge.heartbeat_timeout_ms);
    if (challenge.token_required && !settings_.token) {
      send_join(0, "");  // node 0 logs the refusal, and names it when the join times out
      throw InputError(fmt::format(
          "node 0's rendezvous requires a token and node {} has none; give every node the same "
          "secret in $DLAUNCH_RDZV_TOKEN or --rdzv-token-file (dlaunch submit does this for you)",
          settings_.node_rank));
    }
    if (!challenge.token_required && settings_.token)
      mismatch_problem_ = fmt::format(
          "it has a rendezvous token but node 0 has none; give every node the same token, or none");
  }

  void send_join(int round, const std::string& problem) {
    rendezvous::JoinMessage join;
    join.run_id = settings_.run_id;
    join.round = static_cast<std::uint32_t>(round);
    join.node_rank = static_cast<std::uint32_t>(settings_.node_rank);
    join.nnodes = static_cast<std::uint32_t>(settings_.nnodes);
    join.nproc = static_cast<std::uint32_t>(settings_.nproc);
    join.host = settings_.host;
    join.dlaunch_version = DLAUNCH_VERSION;
    join.allow_uneven = settings_.allow_uneven;
    join.preflight_error = problem;
    if (settings_.token)
      join.proof = rendezvous::token_proof(*settings_.token, challenge_, rendezvous::signed_part(join));
    send(MessageType::kJoin, rendezvous::encode(join));
  }

  // Retries with capped exponential backoff and jitter, so many nodes
  // started at once do not hammer node 0 in lockstep.
  void connect_until(Clock::time_point deadline) {
    std::mt19937 random(std::random_device{}());
    milliseconds backoff(20);
    for (;;) {
      try {
        socket_ = try_connect_tcp(settings_.master_addr, settings_.port, deadline);
      } catch (const SystemError& error) {
        throw InputError(fmt::format("node {} cannot reach the master address: {}. Check "
                                     "--master-addr (or the Slurm node list) and this node's DNS",
                                     settings_.node_rank, error.what()));
      }
      if (socket_) break;
      if (Clock::now() >= deadline)
        throw SystemError(fmt::format(
            "node {} could not reach the rendezvous at {}:{} within {} s: node 0 is missing (its "
            "launcher has not started, or --master-addr/--master-port are wrong). Start dlaunch "
            "run with --node-rank 0 on the master node",
            settings_.node_rank, settings_.master_addr, settings_.port, seconds_of(settings_.timeout)));
      auto jitter = milliseconds(random() % (backoff.count() / 2 + 1));
      wait_for_signal_until(std::min(deadline, Clock::now() + backoff + jitter));
      backoff = std::min(backoff * 2, milliseconds(1000));
    }
    set_no_delay(socket_.get());
    last_heard_ = last_sent_ = Clock::now();
  }

  // Sleeps until WHEN, unless a stop signal arrives (then throws Interrupted).
  void wait_for_signal_until(Clock::time_point when) {
    pollfd signal_fd{signals_.fd(), POLLIN, 0};
    while (::poll(&signal_fd, 1, millis_until(when)) > 0) check_signals();
  }

  void wait_until_all_told(Clock::time_point deadline) {
    while (Clock::now() < deadline) {
      auto step = std::min(deadline, Clock::now() + milliseconds(200));
      if (service_->wait_until_all_told(step)) return;
      check_signals();
      keep_heartbeat();
    }
  }

  void check_signals() {
    while (auto signal = signals_.next()) {
      if (SignalChannel::stops_job(*signal)) throw Interrupted{*signal};
    }
  }

  void send(MessageType type, const std::string& payload) {
    if (!send_all(socket_.get(), rendezvous::encode_frame(type, payload), heartbeat_timeout_))
      lost_ = true;  // noticed by the next read
    last_sent_ = Clock::now();
  }

  // Sends a heartbeat when one is due. Returns why node 0 counts as lost
  // when it has been silent for the heartbeat timeout.
  std::optional<std::string> keep_heartbeat() {
    auto now = Clock::now();
    if (now - last_heard_ > heartbeat_timeout_)
      return fmt::format("node 0 ({}:{}) sent nothing for {} s (--heartbeat-timeout): its host may "
                         "be down, its network cut, or its launcher frozen",
                         settings_.master_addr, settings_.port, seconds_of(heartbeat_timeout_));
    if (now - last_sent_ >= heartbeat_interval(heartbeat_timeout_)) send(MessageType::kHeartbeat, "");
    return std::nullopt;
  }

  // Reads what the socket holds. False when the connection is gone.
  bool receive_available() {
    char buffer[16 * 1024];
    for (;;) {
      ssize_t got = ::recv(socket_.get(), buffer, sizeof(buffer), MSG_DONTWAIT);
      if (got > 0) {
        last_heard_ = Clock::now();
        reader_.append(std::string_view(buffer, static_cast<std::size_t>(got)));
        continue;
      }
      if (got < 0 && (errno == EAGAIN || errno == EINTR)) return !lost_;
      lost_ = true;
      return false;
    }
  }

  // The next frame received, heartbeats aside.
  std::optional<Frame> next_frame() {
    try {
      for (;;) {
        auto frame = reader_.next();
        if (!frame || frame->type != MessageType::kHeartbeat) return frame;
      }
    } catch (const rendezvous::ProtocolError& error) {
      throw SystemError(fmt::format("the rendezvous service sent a malformed message: {}", error.what()));
    }
  }

  std::string lost_message() const {
    return fmt::format("lost contact with the rendezvous on node 0 ({}:{}): its launcher exited or "
                       "was killed",
                       settings_.master_addr, settings_.port);
  }

  // The next frame (queued ones first), waiting until DEADLINE (none: forever)
  // while keeping the heartbeat.
  Frame wait_for_frame(std::optional<Clock::time_point> deadline, const char* waiting_for) {
    for (;;) {
      if (!pending_.empty()) {
        Frame frame = std::move(pending_.front());
        pending_.erase(pending_.begin());
        return frame;
      }
      if (auto frame = next_frame()) return *frame;
      if (lost_) throw SystemError(lost_message());
      auto wake = *next_deadline();
      if (deadline) wake = std::min(wake, *deadline);
      pollfd fds[2] = {{socket_.get(), POLLIN, 0}, {signals_.fd(), POLLIN, 0}};
      ::poll(fds, 2, millis_until(wake));
      if (fds[1].revents != 0) check_signals();
      if (fds[0].revents != 0 && !receive_available() && reader_.empty()) throw SystemError(lost_message());
      if (auto silence = keep_heartbeat()) throw SystemError(*silence);
      if (deadline && Clock::now() >= *deadline && reader_.empty())
        throw SystemError(fmt::format("timed out waiting for {} from the rendezvous at {}:{}",
                                      waiting_for, settings_.master_addr, settings_.port));
    }
  }

  RendezvousSettings settings_;
  SignalChannel& signals_;
  std::unique_ptr<rendezvous::RendezvousServer> service_;
  Fd socket_;
  rendezvous::FrameReader reader_;
  std::vector<Frame> pending_;
  std::string challenge_;
  std::string mismatch_problem_;
  bool lost_ = false;
  int round_ = 0;
  milliseconds heartbeat_timeout_;
  Clock::time_point last_sent_;
  Clock::time_point last_heard_;
};

}  // namespace

std::unique_ptr<Coordinator> make_rendezvous_coordinator(const RendezvousSettings& settings,
                                                         SignalChannel& signals) {
  return std::make_unique<RendezvousCoordinator>(settings, signals);
}

}  // namespace dlaunch
