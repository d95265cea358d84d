#include "rendezvous/rendezvous_coordinator.h"

#include <cerrno>
#include <fmt/format.h>
#include <poll.h>
#include <random>
#include <sys/socket.h>

#include "launch/local_coordinator.h"
#include "rendezvous/protocol.h"
#include "rendezvous/rendezvous_server.h"
#include "util/error.h"
#include "util/socket.h"

namespace dlaunch {
namespace {

using rendezvous::Frame;
using rendezvous::MessageType;

class RendezvousCoordinator : public Coordinator {
 public:
  RendezvousCoordinator(RendezvousSettings settings, SignalChannel& signals)
      : settings_(std::move(settings)), signals_(signals) {
    if (settings_.node_rank == 0) start_service();
  }

  World join(int round) override {
    auto deadline = Clock::now() + settings_.timeout;
    if (!socket_) connect_until(deadline);
    rendezvous::JoinMessage join{settings_.run_id,
                                 static_cast<std::uint32_t>(round),
                                 static_cast<std::uint32_t>(settings_.node_rank),
                                 static_cast<std::uint32_t>(settings_.nnodes),
                                 static_cast<std::uint32_t>(settings_.nproc),
                                 settings_.host};
    send(MessageType::kJoin, rendezvous::encode(join));
    // The service enforces the join deadline and names the missing nodes;
    // the margin only guards against a service that went silent.
    Frame frame = wait_for_frame(deadline + std::chrono::seconds(10), "the world");
    if (frame.type == MessageType::kAbort)
      throw SystemError(rendezvous::decode_text(frame.payload).reason);
    if (frame.type != MessageType::kWorld)
      throw SystemError("the rendezvous service sent an unexpected message while nodes joined");
    round_ = round;
    return rendezvous::decode_world(frame.payload);
  }

  int event_fd() const override { return socket_.get(); }

  std::optional<std::string> poll_stop_request() override {
    bool connected = receive_available();
    while (auto frame = next_frame()) {
      if (frame->type == MessageType::kStop || frame->type == MessageType::kAbort)
        return rendezvous::decode_text(frame->payload).reason;
      pending_.push_back(std::move(*frame));
    }
    if (!connected) return lost_message();
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
    service_ = std::make_unique<rendezvous::RendezvousServer>(std::move(listener), server);
  }

  // Retries with capped exponential backoff and jitter, so many nodes
  // started at once do not hammer node 0 in lockstep.
  void connect_until(Clock::time_point deadline) {
    std::mt19937 random(std::random_device{}());
    std::chrono::milliseconds backoff(20);
    for (;;) {
      socket_ = try_connect_tcp(settings_.master_addr, settings_.port, deadline);
      if (socket_) return;
      if (Clock::now() >= deadline)
        throw SystemError(fmt::format(
            "node {} could not reach the rendezvous at {}:{} within {} s: node 0 is missing (its "
            "launcher has not started, or --master-addr/--master-port are wrong). Start dlaunch "
            "run with --node-rank 0 on the master node",
            settings_.node_rank, settings_.master_addr, settings_.port,
            std::chrono::duration_cast<std::chrono::seconds>(settings_.timeout).count()));
      auto jitter = std::chrono::milliseconds(random() % (backoff.count() / 2 + 1));
      wait_for_signal_until(std::min(deadline, Clock::now() + backoff + jitter));
      backoff = std::min(backoff * 2, std::chrono::milliseconds(1000));
    }
  }

  // Sleeps until WHEN, unless a stop signal arrives (then throws Interrupted).
  void wait_for_signal_until(Clock::time_point when) {
    pollfd signal_fd{signals_.fd(), POLLIN, 0};
    while (::poll(&signal_fd, 1, millis_until(when)) > 0) check_signals();
  }

  void check_signals() {
    while (auto signal = signals_.next()) {
      if (SignalChannel::stops_job(*signal)) throw Interrupted{*signal};
    }
  }

  void send(MessageType type, const std::string& payload) {
    std::string frame = rendezvous::encode_frame(type, payload);
    if (!write_all(socket_.get(), frame) && errno != EAGAIN)
      lost_ = true;  // noticed by the next read
  }

  // Reads what the socket holds. False when the connection is gone.
  bool receive_available() {
    char buffer[16 * 1024];
    for (;;) {
      ssize_t got = ::recv(socket_.get(), buffer, sizeof(buffer), MSG_DONTWAIT);
      if (got > 0) {
        reader_.append(std::string_view(buffer, static_cast<std::size_t>(got)));
        continue;
      }
      if (got < 0 && (errno == EAGAIN || errno == EINTR)) return !lost_;
      lost_ = true;
      return false;
    }
  }

  std::optional<Frame> next_frame() {
    try {
      return reader_.next();
    } catch (const rendezvous::ProtocolError& error) {
      throw SystemError(fmt::format("the rendezvous service sent a malformed message: {}", error.what()));
    }
  }

  std::string lost_message() const {
    return fmt::format("lost contact with the rendezvous on node 0 ({}:{}): its launcher exited or "
                       "was killed",
                       settings_.master_addr, settings_.port);
  }

  // The next frame (queued ones first), waiting until DEADLINE (none: forever).
  Frame wait_for_frame(std::optional<Clock::time_point> deadline, const char* waiting_for) {
    for (;;) {
      if (!pending_.empty()) {
        Frame frame = std::move(pending_.front());
        pending_.erase(pending_.begin());
        return frame;
      }
      if (auto frame = next_frame()) return *frame;
      pollfd fds[2] = {{socket_.get(), POLLIN, 0}, {signals_.fd(), POLLIN, 0}};
      int ready = ::poll(fds, 2, deadline ? millis_until(*deadline) : -1);
      if (ready == 0)
        throw SystemError(fmt::format("timed out waiting for {} from the rendezvous at {}:{}",
                                      waiting_for, settings_.master_addr, settings_.port));
      if (fds[1].revents != 0) check_signals();
      if (fds[0].revents != 0 && !receive_available() && reader_.empty()) throw SystemError(lost_message());
    }
  }

  RendezvousSettings settings_;
  SignalChannel& signals_;
  std::unique_ptr<rendezvous::RendezvousServer> service_;
  Fd socket_;
  rendezvous::FrameReader reader_;
  std::vector<Frame> pending_;
  bool lost_ = false;
  int round_ = 0;
};

}  // namespace

std::unique_ptr<Coordinator> make_rendezvous_coordinator(const RendezvousSettings& settings,
                                                         SignalChannel& signals) {
  return std::make_unique<RendezvousCoordinator>(settings, signals);
}

}  // namespace dlaunch
