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
  if (outbox_.empty()) backlog_since_ = now;
  outbox_.append(frame);
  return flush(now);
}

bool PeerConnection::flush(util::Clock::time_point now) {
  while (outbox_sent_ < outbox_.size()) {
    ssize_t sent = ::send(fd_.get(), outbox_.data() + outbox_sent_, outbox_.size() - outbox_sent_,
                          MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent > 0) {
      outbox_sent_ += static_cast<std::size_t>(sent);
      backlog_since_ = now;  // the peer is reading: the stall clock restarts
      continue;
    }
    if (sent < 0 && errno == EINTR) continue;
    return sent < 0 && errno == EAGAIN;
  }
  outbox_.clear();
  outbox_sent_ = 0;
  return true;
}

}  // namespace dlaunch::rendezvous
