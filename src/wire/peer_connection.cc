#include "wire/peer_connection.h"

#include <cerrno>
#include <fmt/format.h>
#include <sys/socket.h>

namespace dlaunch::rendezvous {
namespace {

// Large enough that a whole World or Verdict usually arrives in one read.
constexpr std::size_t kReadSize = 16 * 1024;
// At most this much per receive(): one flooding peer gets its turn, then the
// others get theirs.
constexpr std::size_t kReadBudget = 4 * kReadSize;

}  // namespace

PeerConnection::PeerConnection(util::Fd fd, util::Clock::time_point now)
    : fd_(std::move(fd)), connected_at_(now), last_heard_(now) {}

const std::string& PeerConnection::address() const {
  if (address_.empty()) address_ = util::peer_address(fd_.get());
  return address_;
}

bool PeerConnection::receive(util::Clock::time_point now) {
  char buffer[kReadSize];
  for (std::size_t taken = 0; taken < kReadBudget;) {
    ssize_t got = ::recv(fd_.get(), buffer, sizeof(buffer), MSG_DONTWAIT);
    if (got > 0) {
      last_heard_ = now;
      reader_.append(std::string_view(buffer, static_cast<std::size_t>(got)));
      if (static_cast<std::size_t>(got) < sizeof(buffer)) return true;
      taken += static_cast<std::size_t>(got);
      continue;
    }
    if (got < 0 && errno == EINTR) continue;
    return got < 0 && errno == EAGAIN;
  }
  return true;
}

bool PeerConnection::send(std::string_view frame, util::Clock::time_point now) {
  if (!outbox_.empty()) {
    outbox_.append(frame);
    return flush(now);
  }
  // Nothing waits: straight to the socket, and only what it does not take
  // is copied to the outbox (node 0 sends each of N launchers its own copy
  // of an O(N) World: copying each whole was a tenth of that turn).
  backlog_since_ = now;
  auto sent = send_some(frame);
  if (!sent) return false;
  outbox_.assign(frame.substr(*sent));
  outbox_sent_ = 0;
  return true;
}

std::optional<std::size_t> PeerConnection::send_some(std::string_view bytes) {
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    ssize_t took = ::send(fd_.get(), bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (took > 0) {
      sent += static_cast<std::size_t>(took);
      continue;
    }
    if (took < 0 && errno == EINTR) continue;
    if (took < 0 && errno != EAGAIN) return std::nullopt;
    break;  // the socket takes no more now
  }
  return sent;
}

bool PeerConnection::flush(util::Clock::time_point now) {
  if (outbox_sent_ < outbox_.size()) {
    auto sent = send_some(std::string_view(outbox_).substr(outbox_sent_));
    if (!sent) return false;
    if (*sent > 0) backlog_since_ = now;  // the peer is reading: the stall clock restarts
    outbox_sent_ += *sent;
    if (outbox_sent_ < outbox_.size()) return true;
  }
  // A drained outbox keeps at most a little of its capacity: a World's
  // worth per launcher, kept for the job's life, was most of node 0's
  // memory at 1,024 launchers (issue 28).
  if (outbox_.capacity() > kKeptBufferCapacity) std::string().swap(outbox_);
  else outbox_.clear();
  outbox_sent_ = 0;
  return true;
}

}  // namespace dlaunch::rendezvous
