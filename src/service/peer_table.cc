#include "service/peer_table.h"

#include <cerrno>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "util/error.h"
#include "util/socket.h"
#include "wire/protocol.h"
#include "wire/token.h"

namespace dlaunch::rendezvous {
namespace {

// After this many refusals the log says so once and goes quiet.
constexpr int kLoggedRefusals = 50;

// How an unproven connection is named: it has told nothing about itself
// that could be trusted yet.
std::string stranger(const Peer& peer) { return fmt::format("a connection from {}", peer.connection.address()); }

}  // namespace

PeerTable::PeerTable(util::Fd listener, PeerTableSettings settings, process::EventLoop& events, PeerTableHost& host)
    : listener_(std::move(listener)), settings_(settings), events_(events), host_(host) {
  spare_fd_.reset(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  util::set_nonblocking(listener_.get());
  util::set_no_delay(listener_.get());  // accepted sockets inherit it: one call, not one per peer
  events_.watch(listener_.get(), EPOLLIN, [this](std::uint32_t) { accept_waiting(); });
}

PeerTable::~PeerTable() {
  // The loop may outlive the table: no handler may name it afterwards.
  events_.unwatch(listener_.get());
  for (auto& [raw, peer] : peers_) {
    if (!peer->closed) events_.unwatch(peer->connection.fd());
  }
}

void PeerTable::accept_waiting() {
  auto now = util::Clock::now();
  for (;;) {
    int fd = ::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if ((errno == EMFILE || errno == ENFILE) && make_room_for_a_connection()) continue;
      return;
    }
    if (unproven_.size() >= settings_.max_unproven) evict_oldest_unproven();
    hold(util::Fd(fd), now);
  }
}

void PeerTable::hold(util::Fd socket, util::Clock::time_point now) {
  auto peer = std::make_unique<Peer>(PeerConnection(std::move(socket), now), random_bytes(kChallengeSize));
  Peer* raw = peer.get();
  raw->connection.set_max_payload(kMaxHandshakePayload);
  try {
    events_.watch(raw->connection.fd(), EPOLLIN,
                  [this, raw](std::uint32_t events) { host_.on_peer_event(*raw, events); });
  } catch (const util::SystemError& error) {
    // The kernel's limit on watched descriptors (a flood): this connection
    // is closed, the service goes on for the launchers already held.
    log_refusal(fmt::format("closed a new connection: {}", error.what()));
    return;
  }
  peers_.emplace(raw, std::move(peer));
  raw->unproven_entry = unproven_.insert(unproven_.end(), raw);
  host_.on_connected(*raw, now);
}

// A flood: close the oldest connection that has not proved itself. A
// launcher answers its challenge at once, so the oldest unproven
// connections are the strangers' (who must keep reopening them), and a
// launcher that proved itself is never closed for room.
void PeerTable::evict_oldest_unproven() {
  Peer* oldest = unproven_.front();
  log_refusal(fmt::format("closed {} to make room: {} connections have not proved the job's token "
                          "(at most {} are held)",
                          stranger(*oldest), unproven_.size(), settings_.max_unproven));
  close(*oldest);
}

// Out of descriptors: frees one by evicting an unproven connection, or,
// when there is none, accepts and closes the waiting one with a spare
// descriptor so the listener does not report it again at once. True when
// accept() may be tried again.
bool PeerTable::make_room_for_a_connection() {
  if (!unproven_.empty()) {
    evict_oldest_unproven();
    return true;
  }
  if (!spare_fd_) return false;
  spare_fd_.reset();
  util::Fd refused(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
  if (refused) log_refusal("closed a new connection: node 0's launcher is out of file descriptors");
  spare_fd_.reset(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  return refused.valid();
}

void PeerTable::mark_proven(Peer& peer) {
  if (peer.authenticated) return;
  peer.authenticated = true;
  unproven_.erase(peer.unproven_entry);
  peer.connection.set_max_payload(kMaxPayload);
}

void PeerTable::send_frame(Peer& peer, const std::string& frame, util::Clock::time_point now) {
  if (peer.closed) return;
  if (!peer.connection.send(frame, now)) return close(peer);
  update_watch(peer);
}

bool PeerTable::flush(Peer& peer, util::Clock::time_point now) {
  if (!peer.connection.flush(now)) return false;
  update_watch(peer);
  return true;
}

// Watch for writability only while the outbox holds bytes.
void PeerTable::update_watch(Peer& peer) {
  bool want = peer.connection.has_backlog();
  if (want == peer.watching_writable) return;
  events_.set_events(peer.connection.fd(), EPOLLIN | (want ? EPOLLOUT : 0u));
  peer.watching_writable = want;
}

void PeerTable::close(Peer& peer) {
  if (peer.closed) return;
  peer.closed = true;
  if (!peer.authenticated) unproven_.erase(peer.unproven_entry);
  events_.unwatch(peer.connection.fd());
  host_.on_closed(peer);
  closed_.push_back(&peer);
}

// Closed peers are freed only here, between batches: the call stacks that
// closed them have returned.
void PeerTable::free_closed() {
  for (Peer* peer : closed_) peers_.erase(peer);
  closed_.clear();
}

bool PeerTable::close_if_handshake_overdue(Peer& peer, util::Clock::time_point now) {
  if (peer.authenticated || now - peer.connection.connected_at() < settings_.handshake_timeout) return false;
  log_refusal(fmt::format("dropped {}: it did not prove the job's token within {} ms{}", stranger(peer),
                          settings_.handshake_timeout.count(),
                          peer.connection.mid_frame() ? " (it stopped mid-message)" : ""));
  close(peer);
  return true;
}

void PeerTable::log_refusal(const std::string& message) {
  ++refusals_;
  if (refusals_ <= kLoggedRefusals) host_.log(message);
  if (refusals_ == kLoggedRefusals)
    host_.log(fmt::format("{} connections refused so far; further refusals are not logged", refusals_));
}

void PeerTable::for_each_open(const std::function<void(Peer&)>& visit) {
  for (auto& [raw, peer] : peers_) {
    if (!peer->closed) visit(*peer);
  }
}

}  // namespace dlaunch::rendezvous
