#include "survey/probe_dialer.h"

#include <arpa/inet.h>
#include <cerrno>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include "util/fd.h"
#include "util/socket.h"
#include "wire/token.h"

namespace dlaunch::rendezvous {
namespace {

struct Attempt {
  std::size_t index = 0;  // into the targets and outcomes
  util::Fd fd;
  enum class State { kConnecting, kAwaitingChallenge, kAwaitingAck, kDone } state = State::kConnecting;
  FrameReader reader;
  std::string challenge;
  std::string nonce;
};

// A non-blocking connect to the numeric IPv4 ADDRESS:PORT; invalid when it
// failed at once (the address is not IPv4, no route).
util::Fd start_connect(const std::string& address, std::uint32_t port) {
  sockaddr_in target{};
  target.sin_family = AF_INET;
  target.sin_port = htons(static_cast<std::uint16_t>(port));
  if (::inet_pton(AF_INET, address.c_str(), &target.sin_addr) != 1) return {};
  util::Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd) return {};
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&target), sizeof target) != 0 && errno != EINPROGRESS)
    return {};
  return fd;
}

bool connected(int fd) {
  int error = 0;
  socklen_t size = sizeof error;
  return ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size) == 0 && error == 0;
}

// Takes one frame in ATTEMPT's state; true when the target proved itself.
// Anything unexpected ends the attempt as unreached.
bool take_frame(Attempt& attempt, const Frame& frame, const ProbeTarget& target, const ProbeIdentity& me) {
  if (attempt.state == Attempt::State::kAwaitingChallenge) {
    if (frame.type != MessageType::kChallenge) return attempt.state = Attempt::State::kDone, false;
    attempt.challenge = decode_challenge(frame.payload).nonce;
    ProbeHelloMessage hello;
    hello.run_id = me.run_id;
    hello.from_slot = static_cast<std::uint32_t>(me.slot);
    hello.to_slot = target.slot;
    hello.nonce = attempt.nonce = random_bytes(kChallengeSize);
    if (me.token) hello.proof = probe_proof(*me.token, "hello", attempt.challenge, hello.nonce, signed_part(hello));
    send_probe_frame(attempt.fd.get(), MessageType::kProbeHello, encode(hello));
    attempt.state = Attempt::State::kAwaitingAck;
    return false;
  }
  attempt.state = Attempt::State::kDone;
  if (frame.type != MessageType::kProbeAck) return false;
  ProbeAckMessage ack = decode_probe_ack(frame.payload);
  if (ack.slot != target.slot) return false;
  if (!me.token) return true;
  return proofs_match(probe_proof(*me.token, "ack", attempt.challenge, attempt.nonce,
                                  probe_ack_signed_part(me.run_id, target.slot)),
                      ack.proof);
}

// Reads what arrived for ATTEMPT; true when the target proved itself.
bool take_bytes(Attempt& attempt, const ProbeTarget& target, const ProbeIdentity& me) {
  char buffer[2048];
  ssize_t got = ::recv(attempt.fd.get(), buffer, sizeof buffer, MSG_DONTWAIT);
  if (got < 0 && (errno == EAGAIN || errno == EINTR)) return false;
  if (got <= 0) return attempt.state = Attempt::State::kDone, false;
  try {
    attempt.reader.append(std::string_view(buffer, static_cast<std::size_t>(got)));
    while (attempt.state != Attempt::State::kDone) {
      auto frame = attempt.reader.next();
      if (!frame) return false;
      if (take_frame(attempt, *frame, target, me)) return true;
    }
  } catch (const ProtocolError&) {
    attempt.state = Attempt::State::kDone;
  }
  return false;
}

void probe_batch(std::vector<Attempt>& attempts, const std::vector<ProbeTarget>& targets,
                 std::vector<ProbeOutcome>& outcomes, const ProbeIdentity& me, util::Clock::time_point deadline) {
  for (;;) {
    std::vector<pollfd> fds;
    std::vector<Attempt*> polled;
    for (auto& attempt : attempts) {
      if (attempt.state == Attempt::State::kDone) continue;
      short events = attempt.state == Attempt::State::kConnecting ? POLLOUT : POLLIN;
      fds.push_back({attempt.fd.get(), events, 0});
      polled.push_back(&attempt);
    }
    if (fds.empty() || util::Clock::now() >= deadline) return;
    if (::poll(fds.data(), fds.size(), util::millis_until(deadline)) < 0 && errno != EINTR) return;
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      Attempt& attempt = *polled[i];
      const ProbeTarget& target = targets[attempt.index];
      if (attempt.state == Attempt::State::kConnecting) {
        attempt.state = connected(attempt.fd.get()) ? Attempt::State::kAwaitingChallenge : Attempt::State::kDone;
        continue;
      }
      if (take_bytes(attempt, target, me)) outcomes[attempt.index].reached = true;
    }
  }
}

}  // namespace

std::vector<ProbeOutcome> probe_targets(const std::vector<ProbeTarget>& targets, const ProbeIdentity& me,
                                        std::chrono::milliseconds timeout) {
  std::vector<ProbeOutcome> outcomes;
  for (const auto& target : targets) outcomes.push_back({target.slot, target.address, false});
  for (std::size_t first = 0; first < targets.size(); first += kMostProbeConnections) {
    std::vector<Attempt> attempts;
    for (std::size_t i = first; i < std::min(targets.size(), first + kMostProbeConnections); ++i) {
      Attempt attempt;
      attempt.index = i;
      attempt.fd = start_connect(targets[i].address, targets[i].port);
      if (!attempt.fd) continue;
      attempt.reader.set_max_payload(kMostProbePayload);
      attempts.push_back(std::move(attempt));
    }
    probe_batch(attempts, targets, outcomes, me, util::Clock::now() + timeout);
  }
  return outcomes;
}

}  // namespace dlaunch::rendezvous
