#include "rendezvous/rendezvous_server.h"

#include <cerrno>
#include <fmt/format.h>
#include <map>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <vector>

#include "launch/failure_report.h"
#include "rendezvous/protocol.h"
#include "util/error.h"
#include "util/ports.h"
#include "util/socket.h"

namespace dlaunch::rendezvous {

class RendezvousServer::Loop {
 public:
  Loop(Fd listener, ServerSettings settings)
      : listener_(std::move(listener)), settings_(std::move(settings)) {
    set_nonblocking(listener_.get());
    deadline_ = Clock::now() + settings_.join_timeout;
  }

  void run(int wake_fd) {
    for (;;) {
      std::vector<pollfd> fds = {{wake_fd, POLLIN, 0}, {listener_.get(), POLLIN, 0}};
      for (auto& peer : peers_) fds.push_back({peer->fd.get(), POLLIN, 0});
      int timeout = phase_ == Phase::kJoining ? millis_until(deadline_) : -1;
      int ready = ::poll(fds.data(), fds.size(), timeout);
      if (ready < 0 && errno != EINTR) return;
      if (fds[0].revents != 0) return;
      if (fds[1].revents & POLLIN) accept_peers();
      for (std::size_t i = 2; i < fds.size(); ++i) {
        if (fds[i].revents != 0) on_readable(*peers_[i - 2]);
      }
      if (phase_ == Phase::kJoining && Clock::now() >= deadline_) abort_missing();
      drop_closed_peers();
    }
  }

 private:
  enum class Phase { kJoining, kRunning, kDone };

  struct Peer {
    Fd fd;
    FrameReader reader;
    int node_rank = -1;  // -1 until it joined the current round
    std::string host;
    bool closed = false;
  };

  void log(const std::string& message) {
    if (settings_.log) settings_.log(message);
    else fmt::print(stderr, "dlaunch: rendezvous: {}\n", message);
  }

  void accept_peers() {
    for (;;) {
      int fd = ::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd < 0) return;
      auto peer = std::make_unique<Peer>();
      peer->fd.reset(fd);
      peers_.push_back(std::move(peer));
    }
  }

  void on_readable(Peer& peer) {
    if (peer.closed) return;
    char buffer[16 * 1024];
    ssize_t got = ::recv(peer.fd.get(), buffer, sizeof(buffer), 0);
    if (got < 0 && (errno == EAGAIN || errno == EINTR)) return;
    if (got <= 0) {
      on_disconnect(peer);
      return;
    }
    peer.reader.append(std::string_view(buffer, static_cast<std::size_t>(got)));
    try {
      while (!peer.closed) {
        auto frame = peer.reader.next();
        if (!frame) break;
        handle(peer, *frame);
      }
    } catch (const ProtocolError& error) {
      log(fmt::format("refused a peer: {}", error.what()));
      send(peer, MessageType::kAbort, encode(TextMessage{0, error.what()}));
      close(peer);
    }
  }

  void handle(Peer& peer, const Frame& frame) {
    switch (frame.type) {
      case MessageType::kJoin: on_join(peer, decode_join(frame.payload)); break;
      case MessageType::kFailure: on_failure(peer, decode_failure(frame.payload)); break;
      case MessageType::kOutcome: on_outcome(peer, decode_outcome(frame.payload)); break;
      default: throw ProtocolError("a launcher sent a message only the service sends");
    }
  }

  void refuse(Peer& peer, const std::string& reason) {
    log(reason);
    send(peer, MessageType::kAbort, encode(TextMessage{static_cast<std::uint32_t>(round_), reason}));
    close(peer);
  }

  void on_join(Peer& peer, const JoinMessage& join) {
    int rank = static_cast<int>(join.node_rank);
    if (join.run_id != settings_.run_id)
      return refuse(peer, fmt::format("refused {} (node {}): it belongs to job '{}', this rendezvous "
                                      "serves job '{}'; give every node the same --rdzv-id",
                                      join.host, rank, join.run_id, settings_.run_id));
    if (static_cast<int>(join.nnodes) != settings_.nnodes)
      return refuse(peer, fmt::format("refused {} (node {}): it expects {} nodes but node 0 expects "
                                      "{}; give every node the same --nnodes",
                                      join.host, rank, join.nnodes, settings_.nnodes));
    if (rank < 0 || rank >= settings_.nnodes || join.nproc == 0)
      return refuse(peer, fmt::format("refused {}: node rank {} is not in 0..{}", join.host, rank,
                                      settings_.nnodes - 1));
    if (phase_ != Phase::kJoining || static_cast<int>(join.round) != round_)
      return refuse(peer, fmt::format("refused {} (node {}): it joined round {} but the job is in "
                                      "round {} and {}",
                                      join.host, rank, join.round, round_,
                                      phase_ == Phase::kJoining ? "still gathering" : "running"));
    auto existing = joined_.find(rank);
    if (existing != joined_.end() && existing->second != &peer)
      return refuse(peer, fmt::format("refused {}: node rank {} already joined from {}; give every "
                                      "node a distinct --node-rank",
                                      join.host, rank, existing->second->host));
    peer.node_rank = rank;
    peer.host = join.host;
    joined_[rank] = &peer;
    nproc_[rank] = static_cast<int>(join.nproc);
    if (static_cast<int>(joined_.size()) == settings_.nnodes) start_round();
  }

  void start_round() {
    World world;
    world.round = round_;
    world.run_id = settings_.run_id;
    world.worker_master_addr = settings_.worker_master_addr;
    world.worker_master_port = pick_free_port(settings_.worker_master_addr);
    for (const auto& [rank, peer] : joined_) {
      world.nproc_per_node.push_back(nproc_[rank]);
      world.hosts.push_back(peer->host);
    }
    phase_ = Phase::kRunning;
    broadcast(MessageType::kWorld, encode(world), nullptr);
  }

  void on_failure(Peer& peer, const Failure& failure) {
    if (phase_ != Phase::kRunning || peer.node_rank < 0) return;
    record_failure(failure, &peer);
  }

  // The job's first failure makes every other node stop its workers.
  void record_failure(const Failure& failure, Peer* reporter) {
    if (first_failure_) return;
    first_failure_ = failure;
    std::string reason = fmt::format("the job failed on node {}: {}", failure.node_rank,
                                     describe_failure(failure));
    broadcast(MessageType::kStop, encode(TextMessage{static_cast<std::uint32_t>(round_), reason}),
              reporter);
  }

  void on_outcome(Peer& peer, const OutcomeMessage& message) {
    if (phase_ != Phase::kRunning || peer.node_rank < 0) return;
    const NodeOutcome& outcome = message.outcome;
    if (outcome.failure) {
      // The first failure's own node knows its last lines; prefer that account.
      bool same = first_failure_ && first_failure_->node_rank == outcome.failure->node_rank &&
                  first_failure_->global_rank == outcome.failure->global_rank;
      if (same) first_failure_ = outcome.failure;
      else record_failure(*outcome.failure, &peer);
    }
    outcomes_[peer.node_rank] = outcome;
    if (static_cast<int>(outcomes_.size()) == settings_.nnodes) decide();
  }

  void on_disconnect(Peer& peer) {
    int rank = peer.node_rank;
    close(peer);
    if (rank < 0) return;
    if (phase_ == Phase::kJoining) {
      joined_.erase(rank);
      return;
    }
    if (phase_ != Phase::kRunning || outcomes_.count(rank) > 0) return;
    Failure lost;
    lost.node_rank = rank;
    lost.host = peer.host;
    lost.description = fmt::format(
        "lost contact with the launcher of node {} ({}): it exited or was killed", rank, peer.host);
    log(lost.description);
    record_failure(lost, &peer);
    NodeOutcome outcome;
    outcome.failure = lost;
    lost_node_ = true;
    outcomes_[rank] = outcome;
    if (static_cast<int>(outcomes_.size()) == settings_.nnodes) decide();
  }

  void decide() {
    Verdict verdict;
    bool all_succeeded = true;
    bool stopped_by_signal = false;
    for (const auto& [rank, outcome] : outcomes_) {
      all_succeeded &= outcome.succeeded;
      stopped_by_signal |= outcome.stop_signal != 0;
    }
    if (!all_succeeded) {
      verdict.failure = first_failure_;
      verdict.exit_code = first_failure_ ? first_failure_->exit_code : 1;
      if (verdict.exit_code == 0) verdict.exit_code = 1;
      bool restart = !stopped_by_signal && !lost_node_ && round_ < settings_.max_restarts;
      verdict.kind = restart ? Verdict::Kind::kRestart : Verdict::Kind::kFailed;
    }
    broadcast(MessageType::kVerdict,
              encode(VerdictMessage{static_cast<std::uint32_t>(round_), verdict}), nullptr);
    if (verdict.kind != Verdict::Kind::kRestart) {
      phase_ = Phase::kDone;
      return;
    }
    ++round_;
    phase_ = Phase::kJoining;
    deadline_ = Clock::now() + settings_.join_timeout;
    for (auto& [rank, peer] : joined_) peer->node_rank = -1;
    joined_.clear();
    outcomes_.clear();
    first_failure_.reset();
  }

  void abort_missing() {
    std::vector<std::string> missing;
    for (int rank = 0; rank < settings_.nnodes; ++rank) {
      if (joined_.count(rank) == 0) missing.push_back(std::to_string(rank));
    }
    std::string reason = fmt::format(
        "rendezvous timed out after {} s: {}/{} nodes joined; missing node rank(s): {}. Start "
        "dlaunch run on those nodes, or check --nnodes, --master-addr and --master-port",
        std::chrono::duration_cast<std::chrono::seconds>(settings_.join_timeout).count(),
        joined_.size(), settings_.nnodes, fmt::join(missing, ", "));
    log(reason);
    broadcast(MessageType::kAbort, encode(TextMessage{static_cast<std::uint32_t>(round_), reason}),
              nullptr);
    phase_ = Phase::kDone;
  }

  void broadcast(MessageType type, const std::string& payload, const Peer* except) {
    for (auto& [rank, peer] : joined_) {
      if (peer != except && !peer->closed) send(*peer, type, payload);
    }
  }

  void send(Peer& peer, MessageType type, const std::string& payload) {
    // A peer that does not read is as good as gone.
    if (!send_all(peer.fd.get(), encode_frame(type, payload), kSendStallLimit)) close(peer);
  }

  void close(Peer& peer) {
    if (peer.closed) return;
    peer.closed = true;
    if (peer.node_rank >= 0 && phase_ == Phase::kJoining) joined_.erase(peer.node_rank);
  }

  void drop_closed_peers() {
    std::erase_if(peers_, [&](const std::unique_ptr<Peer>& peer) {
      if (!peer->closed) return false;
      for (auto it = joined_.begin(); it != joined_.end();) {
        it = it->second == peer.get() ? joined_.erase(it) : std::next(it);
      }
      return true;
    });
  }

  static constexpr std::chrono::milliseconds kSendStallLimit{5000};

  Fd listener_;
  ServerSettings settings_;
  std::vector<std::unique_ptr<Peer>> peers_;
  Phase phase_ = Phase::kJoining;
  int round_ = 0;
  Clock::time_point deadline_;
  std::map<int, Peer*> joined_;
  std::map<int, int> nproc_;
  std::map<int, NodeOutcome> outcomes_;
  std::optional<Failure> first_failure_;
  bool lost_node_ = false;
};

RendezvousServer::RendezvousServer(Fd listener, ServerSettings settings)
    : loop_(std::make_unique<Loop>(std::move(listener), std::move(settings))),
      wake_(make_pipe()),
      thread_([this, wake = wake_.read_end.get()] { loop_->run(wake); }) {}

RendezvousServer::~RendezvousServer() {
  write_all(wake_.write_end.get(), "x");
  thread_.join();
}

}  // namespace dlaunch::rendezvous
