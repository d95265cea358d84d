#include "survey/probe_responder.h"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fmt/format.h>
#include <list>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>
#include <vector>

#include "util/error.h"
#include "util/fd.h"
#include "util/socket.h"
#include "wire/protocol.h"
#include "wire/token.h"

namespace dlaunch::rendezvous {
namespace {

constexpr std::size_t kReadBudget = 2048;
// Connections accepted per wake-up, so a flood cannot starve the others.
constexpr int kAcceptsPerWake = 64;

struct ProbeConnection {
  util::Fd fd;
  std::string challenge;
  FrameReader reader;
  util::Clock::time_point deadline;
};

// The Ack for a valid HELLO on a connection whose challenge was CHALLENGE;
// nullopt when the Hello is for another job or slot, or its proof fails.
std::optional<ProbeAckMessage> answer(const ProbeIdentity& me, const std::string& challenge,
                                      const ProbeHelloMessage& hello) {
  if (hello.run_id != me.run_id || static_cast<int>(hello.to_slot) != me.slot) return std::nullopt;
  ProbeAckMessage ack;
  ack.slot = static_cast<std::uint32_t>(me.slot);
  if (!me.token) return ack;
  if (!proofs_match(probe_proof(*me.token, "hello", challenge, hello.nonce, signed_part(hello)), hello.proof))
    return std::nullopt;
  ack.proof = probe_proof(*me.token, "ack", challenge, hello.nonce, probe_ack_signed_part(me.run_id, ack.slot));
  return ack;
}

// Reads what CONNECTION holds and answers a whole Hello. True when the
// connection is finished (answered, refused, closed or broken).
bool serve_connection(const ProbeIdentity& me, ProbeConnection& connection) {
  char buffer[kReadBudget];
  ssize_t got = ::recv(connection.fd.get(), buffer, sizeof buffer, MSG_DONTWAIT);
  if (got < 0) return errno != EAGAIN && errno != EINTR;
  if (got == 0) return true;
  try {
    connection.reader.append(std::string_view(buffer, static_cast<std::size_t>(got)));
    auto frame = connection.reader.next();
    if (!frame) return false;
    if (frame->type != MessageType::kProbeHello) return true;
    if (auto ack = answer(me, connection.challenge, decode_probe_hello(frame->payload)))
      send_probe_frame(connection.fd.get(), MessageType::kProbeAck, encode(*ack));
  } catch (const ProtocolError&) {
    // A stranger's bytes: closed without a word.
  }
  return true;
}

}  // namespace

void send_probe_frame(int fd, MessageType type, const std::string& payload) {
  std::string frame = encode_frame(type, payload);
  (void)::send(fd, frame.data(), frame.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
}

ProbeResponder::ProbeResponder(ProbeIdentity identity)
    : identity_(std::move(identity)),
      slot_(identity_.slot),
      listener_(util::listen_tcp(0)),
      wake_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  if (!wake_) throw util::SystemError(fmt::format("cannot create the probe responder's eventfd: {}", std::strerror(errno)));
  util::set_nonblocking(listener_.get());
  port_ = util::bound_port(listener_.get());
  thread_ = std::thread([this] { serve(); });
}

ProbeResponder::~ProbeResponder() {
  std::uint64_t one = 1;
  (void)!::write(wake_.get(), &one, sizeof one);
  thread_.join();
}

void ProbeResponder::serve() {
  std::list<ProbeConnection> connections;  // oldest first
  for (;;) {
    std::vector<pollfd> fds{{wake_.get(), POLLIN, 0}, {listener_.get(), POLLIN, 0}};
    auto soonest = util::Clock::now() + std::chrono::hours(1);
    for (const auto& connection : connections) {
      fds.push_back({connection.fd.get(), POLLIN, 0});
      soonest = std::min(soonest, connection.deadline);
    }
    if (::poll(fds.data(), fds.size(), util::millis_until(soonest)) < 0 && errno != EINTR) return;
    if (fds[0].revents != 0) return;
    auto now = util::Clock::now();
    identity_.slot = slot_.load(std::memory_order_acquire);
    std::size_t index = 2;
    for (auto it = connections.begin(); it != connections.end(); ++index) {
      bool done = fds[index].revents != 0 && serve_connection(identity_, *it);
      if (done || now >= it->deadline) it = connections.erase(it);
      else ++it;
    }
    if (fds[1].revents == 0) continue;
    for (int accepted = 0; accepted < kAcceptsPerWake; ++accepted) {
      int fd = ::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd < 0) break;
      if (connections.size() >= kMostProbeConnections) connections.pop_front();
      ProbeConnection connection{util::Fd(fd), random_bytes(kChallengeSize), {}, now + kProbeHandshakeTimeout};
      connection.reader.set_max_payload(kMostProbePayload);
      send_probe_frame(fd, MessageType::kChallenge,
                     encode(ChallengeMessage{connection.challenge, identity_.token.has_value(), 0}));
      connections.push_back(std::move(connection));
    }
  }
}

}  // namespace dlaunch::rendezvous
