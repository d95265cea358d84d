#include "rendezvous/peer_connection.h"

#include <arpa/inet.h>
#include <cerrno>
#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/socket.h>

namespace dlaunch::rendezvous {
namespace {

std::string peer_address(int fd) {
  sockaddr_storage address{};
  socklen_t size = sizeof(address);
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&address), &size) != 0) return "an unknown address";
  char text[INET6_ADDRSTRLEN] = {};
  if (address.ss_family == AF_INET) {
    const auto* ipv4 = reinterpret_cast<const sockaddr_in*>(&address);
    ::inet_ntop(AF_INET, &ipv4->sin_addr, text, sizeof(text));
    return fmt::format("{}:{}", text, ntohs(ipv4->sin_port));
  }
  if (address.ss_family == AF_INET6) {
    const auto* ipv6 = reinterpret_cast<const sockaddr_in6*>(&address);
    ::inet_ntop(AF_INET6, &ipv6->sin6_addr, text, sizeof(text));
    return fmt::format("[{}]:{}", text, ntohs(ipv6->sin6_port));
  }
  return "a non-IP address";
}

// Large enough that a whole World or Verdict usually arrives in one read.
constexpr std::size_t kReadSize = 16 * 1024;

}  // namespace

PeerConnection::PeerConnection(Fd fd, Clock::time_point now)
    : fd_(std::move(fd)), connected_at_(now), last_heard_(now) {}

const std::string& PeerConnection::address() const {
  if (address_.empty()) address_ = peer_address(fd_.get());
  return address_;
}

bool PeerConnection::receive(Clock::time_point now) {
  char buffer[kReadSize];
  for (;;) {
    ssize_t got = ::recv(fd_.get(), buffer, sizeof(buffer), 0);
    if (got > 0) {
      last_heard_ = now;
      reader_.append(std::string_view(buffer, static_cast<std::size_t>(got)));
      if (static_cast<std::size_t>(got) < sizeof(buffer)) return true;
      continue;
    }
    if (got < 0 && errno == EINTR) continue;
    return got < 0 && errno == EAGAIN;
  }
}

bool PeerConnection::send(std::string_view frame, Clock::time_point now) {
  if (outbox_.empty()) backlog_since_ = now;
  outbox_.append(frame);
  return flush(now);
}

bool PeerConnection::flush(Clock::time_point now) {
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
