#include "rendezvous/service_dialer.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <random>

#include "process/link_wait.h"
#include "util/console.h"
#include "util/duration_text.h"
#include "util/error.h"
#include "wire/token.h"

namespace dlaunch::rendezvous {
namespace {

using std::chrono::milliseconds;

const char* type_name(MessageType type) {
  switch (type) {
    case MessageType::kJoin: return "a Join";
    case MessageType::kWorld: return "a World";
    case MessageType::kAbort: return "an Abort";
    case MessageType::kFailure: return "a Failure";
    case MessageType::kStop: return "a Stop";
    case MessageType::kOutcome: return "an Outcome";
    case MessageType::kVerdict: return "a Verdict";
    case MessageType::kChallenge: return "a Challenge";
    case MessageType::kHeartbeat: return "a Heartbeat";
    case MessageType::kWelcome: return "a Welcome";
    case MessageType::kProgress: return "a Progress";
    case MessageType::kCapture: return "a Capture";
    case MessageType::kStacks: return "a Stacks";
    case MessageType::kStacksEnd: return "a StacksEnd";
    case MessageType::kProbe: return "a Probe";
    case MessageType::kProbeReport: return "a ProbeReport";
    case MessageType::kProbeHello: return "a ProbeHello";
    case MessageType::kProbeAck: return "a ProbeAck";
    case MessageType::kGate: return "a Gate";
    case MessageType::kGateReport: return "a GateReport";
    case MessageType::kFenced: return "a Fenced";
    case MessageType::kStarted: return "a Started";
    case MessageType::kSealedJoin: return "a Join";
  }
  return "a message";
}

// The reason an Abort gives, or a description when even that is malformed.
std::string abort_reason(std::string_view payload) {
  try {
    return decode_text(payload).reason;
  } catch (const ProtocolError& error) {
    return fmt::format("(a malformed refusal: {})", error.what());
  }
}

// What a connection attempt that failed met: "connection refused", with
// the address when the master address resolves to another text.
std::string unreached(const util::TcpAddress& address, int error, const DialSettings& settings) {
  std::string what = error == ETIMEDOUT
                         ? fmt::format("no answer to the connection within {} ms", settings.handshake_timeout.count())
                         : std::string(std::strerror(error));
  // strerror's "Connection refused" reads as a clause after a colon.
  if (!what.empty()) what[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(what[0])));
  if (address.text == fmt::format("{}:{}", settings.master_addr, settings.port)) return what;
  return fmt::format("{} ({})", what, address.text);
}

}  // namespace

struct ServiceDialer::Attempt {
  std::optional<Dialed> dialed;
  std::string seen;  // what this attempt met, for the user; empty: nobody answered
};

ServiceDialer::ServiceDialer(DialSettings settings, process::SignalChannel& signals)
    : settings_(std::move(settings)), signals_(signals) {}

Dialed ServiceDialer::dial(const JoinMessage& join, util::Clock::time_point deadline) {
  if (deadline != deadline_ || wait_began_ == util::Clock::time_point{}) {
    wait_began_ = util::Clock::now();
    next_waiting_line_ = settings_.waiting_lines.interval_after(milliseconds(0));
  }
  deadline_ = deadline;
  std::mt19937 random(std::random_device{}());
  milliseconds backoff(20);
  for (;;) {
    std::vector<util::TcpAddress> addresses;
    try {
      addresses = util::resolve_tcp(settings_.master_addr, settings_.port);
    } catch (const util::SystemError& error) {
      throw util::InputError(fmt::format("{} cannot reach the master address: {}. Check "
                                   "--master-addr (or the Slurm node list) and this node's DNS",
                                   self(), error.what()));
    }
    for (const auto& address : addresses) {
      Attempt result = attempt(address, join, deadline);
      if (result.dialed) return std::move(*result.dialed);
      if (!result.seen.empty()) saw(result.seen);
    }
    say_still_waiting();
    if (util::Clock::now() >= deadline) give_up();
    // Capped exponential backoff with jitter, so many nodes started at once
    // do not hammer node 0 in lockstep.
    auto jitter = milliseconds(random() % (backoff.count() / 2 + 1));
    // Waking for a due waiting line costs one early attempt, and keeps the
    // line on its mark.
    wait_for_signal_until(
        std::min({deadline, util::Clock::now() + backoff + jitter, wait_began_ + next_waiting_line_}));
    backoff = std::min(backoff * 2, milliseconds(1000));
  }
}

bool ServiceDialer::out_of_time() const { return util::Clock::now() >= deadline_; }

void ServiceDialer::saw(const std::string& what) {
  last_seen_ = what;
  latest_ = what;
  if (!noticed_.insert(what).second) return;
  tell(fmt::format("{}: {}; trying again until --rdzv-timeout ({} s)", self(), what,
                   util::whole_seconds(settings_.rendezvous_timeout)));
}

void ServiceDialer::say_still_waiting() {
  auto waited = std::chrono::duration_cast<milliseconds>(util::Clock::now() - wait_began_);
  if (waited < next_waiting_line_) return;
  // The next line is due on the schedule's next mark after now, so an
  // attempt that took long (a silent host) does not bring a burst of lines.
  while (next_waiting_line_ <= waited)
    next_waiting_line_ += settings_.waiting_lines.interval_after(next_waiting_line_);
  ReachingService reaching;
  reaching.service = settings_.service_name;
  reaching.address = fmt::format("{}:{}", settings_.master_addr, settings_.port);
  reaching.last_seen = latest_;
  reaching.waited = waited;
  reaching.timeout = settings_.rendezvous_timeout;
  tell(reaching_line(reaching));
}

void ServiceDialer::tell(const std::string& line) const {
  if (settings_.notice) settings_.notice(line);
  else util::console_err().write_message("dlaunch: " + line);
}

void ServiceDialer::give_up() const {
  if (last_seen_.empty())
    throw util::SystemError(fmt::format(
        "{} could not reach the rendezvous at {}:{} within {} s: node 0 is missing (its "
        "launcher has not started, or --master-addr/--master-port are wrong). {}",
        self(), settings_.master_addr, settings_.port, util::whole_seconds(settings_.rendezvous_timeout),
        settings_.node_rank < 0 ? "Start dlaunch run on the endpoint's host too: the launcher there serves the "
                                  "rendezvous"
                                : "Start dlaunch run with --node-rank 0 on the master node"));
  throw util::SystemError(fmt::format(
      "{} could not join the rendezvous at {}:{} within {} s: {}. Check that node 0's "
      "launcher runs there with the same settings{}",
      self(), settings_.master_addr, settings_.port,
      util::whole_seconds(settings_.rendezvous_timeout), last_seen_,
      settings_.token ? " and the same rendezvous token" : ""));
}

ServiceDialer::Attempt ServiceDialer::attempt(const util::TcpAddress& address, const JoinMessage& join,
                                              util::Clock::time_point deadline) {
  auto handshake_deadline = std::min(deadline, util::Clock::now() + settings_.handshake_timeout);
  util::Fd socket = util::try_connect_address(address, handshake_deadline);
  if (!socket) {
    // Nobody listens (yet): the usual wait for node 0, said only in the waiting lines.
    latest_ = unreached(address, errno, settings_);
    return {};
  }
  PeerConnection connection(std::move(socket), util::Clock::now());
  connection.set_max_payload(kMaxHandshakePayload);
  return handshake(connection, address.text, join, handshake_deadline);
}

ServiceDialer::Attempt ServiceDialer::handshake(PeerConnection& connection, const std::string& address,
                                                const JoinMessage& join, util::Clock::time_point deadline) {
  Frame frame;
  std::string error;
  switch (receive_frame(connection, deadline, frame, error)) {
    case Received::kTimedOut:
      if (out_of_time()) return {};  // the rendezvous deadline, not the peer, cut the wait short
      return {std::nullopt, fmt::format("{} answered but is not a dlaunch rendezvous (no greeting within "
                                        "{} ms)",
                                        address, settings_.handshake_timeout.count())};
    case Received::kClosed:
      return {std::nullopt, fmt::format("{} closed the connection before the handshake", address)};
    case Received::kGarbage:
      return {std::nullopt, fmt::format("{} answered but is not a dlaunch rendezvous ({})", address, error)};
    case Received::kFrame: break;
  }
  if (frame.type == MessageType::kAbort) {
    if (!settings_.token) throw util::SystemError(abort_reason(frame.payload));
    return {std::nullopt, fmt::format("{} refused this launcher before any handshake, without proving it "
                                      "holds the job's token: \"{}\"",
                                      address, abort_reason(frame.payload))};
  }
  ChallengeMessage challenge;
  try {
    if (frame.type != MessageType::kChallenge) throw ProtocolError(fmt::format("{} first", type_name(frame.type)));
    challenge = decode_challenge(frame.payload);
  } catch (const ProtocolError& bad) {
    return {std::nullopt, fmt::format("{} answered but is not a dlaunch rendezvous ({} instead of a "
                                      "challenge)",
                                      address, bad.what())};
  }
  std::string nonce = random_bytes(kChallengeSize);
  if (challenge.token_required && !settings_.token) {
    send_join(connection, join, challenge.nonce, nonce);  // node 0 logs the refusal, and names it at its timeout
    throw util::InputError(fmt::format(
        "node 0's rendezvous requires a token and {} has none; give every node the same "
        "secret in $DLAUNCH_RDZV_TOKEN or --rdzv-token-file (dlaunch submit does this for you)",
        self()));
  }
  if (!challenge.token_required && settings_.token) {
    // A node 0 started without the token stops the whole job at once on this
    // problem; a stranger learns nothing from it.
    JoinMessage mismatch = join;
    if (mismatch.preflight_error.empty())
      mismatch.preflight_error = "it has a rendezvous token but node 0 has none; give every node the same token, or none";
    send_join(connection, mismatch, challenge.nonce, nonce);
    return {std::nullopt, fmt::format("{} requires no rendezvous token, so it cannot prove it holds this "
                                      "job's: either node 0 was started without the token (give every "
                                      "node the same token, or none) or it is not node 0",
                                      address)};
  }
  Session session = settings_.token ? Session(*settings_.token, challenge.nonce, nonce, End::kLauncher) : Session();
  send_join(connection, join, challenge.nonce, nonce, &session);
  return welcome(connection, std::move(session), address, deadline);
}

ServiceDialer::Attempt ServiceDialer::welcome(PeerConnection& connection, Session session,
                                              const std::string& address, util::Clock::time_point deadline) {
  Frame frame;
  std::string error;
  switch (receive_frame(connection, deadline, frame, error)) {
    case Received::kTimedOut:
      if (out_of_time()) return {};
      return {std::nullopt, fmt::format("{} did not answer this node's join within {} ms", address,
                                        settings_.handshake_timeout.count())};
    case Received::kClosed:
      return {std::nullopt, fmt::format("{} closed the connection before the handshake completed", address)};
    case Received::kGarbage:
      return {std::nullopt, fmt::format("{} answered the join with garbage ({})", address, error)};
    case Received::kFrame: break;
  }
  std::string payload;
  try {
    payload = session.open(frame);
  } catch (const ProtocolError& unproved) {
    if (frame.type == MessageType::kAbort)
      return {std::nullopt, fmt::format("{} refused this launcher without proving it holds the job's "
                                        "token: \"{}\"",
                                        address, abort_reason(frame.payload))};
    return {std::nullopt, fmt::format("{} did not prove it holds the job's token: {}", address, unproved.what())};
  }
  // Proved (or no token): node 0 has the last word.
  if (frame.type == MessageType::kAbort) throw util::SystemError(abort_reason(payload));
  try {
    if (frame.type != MessageType::kWelcome) throw ProtocolError(fmt::format("{} instead of a welcome", type_name(frame.type)));
    WelcomeMessage welcome = decode_welcome(payload);
    milliseconds heartbeat(welcome.heartbeat_timeout_ms);
    // Node 0 gives a slot only to a launcher that asked for any.
    if (settings_.node_rank >= 0 && welcome.slot != static_cast<std::uint32_t>(settings_.node_rank))
      throw ProtocolError(fmt::format("a welcome to slot {}, but this launcher is node {}", welcome.slot,
                                      settings_.node_rank));
    Dialed dialed{ServiceLink(std::move(connection), std::move(session), address), heartbeat,
                  static_cast<int>(welcome.slot)};
    return {std::move(dialed), ""};
  } catch (const ProtocolError& bad) {
    return {std::nullopt, fmt::format("{} answered the join with {}", address, bad.what())};
  }
}

// With SESSION sealed the Join travels sealed (a SealedJoin: the nonce node
// 0 needs to derive the keys, then the sealed Join), so nothing of it is
// readable on the path; else in clear, as a launcher without the token must
// still be told why it is refused.
void ServiceDialer::send_join(PeerConnection& connection, JoinMessage join, const std::string& challenge,
                              const std::string& nonce, Session* session) {
  join.nonce = nonce;
  if (settings_.token) join.proof = join_proof(*settings_.token, challenge, nonce, signed_part(join));
  std::string frame;
  if (session != nullptr && session->sealed()) {
    SealedJoinMessage sealed{nonce, join.node_rank, session->seal(MessageType::kSealedJoin, encode(join), join.round)};
    frame = encode_frame(MessageType::kSealedJoin, encode(sealed), join.round);
  } else {
    frame = encode_frame(MessageType::kJoin, encode(join), join.round);
  }
  connection.send(frame, util::Clock::now());
}

ServiceDialer::Received ServiceDialer::receive_frame(PeerConnection& connection,
                                                     util::Clock::time_point deadline, Frame& frame,
                                                     std::string& error) {
  for (;;) {
    try {
      if (auto next = connection.next_frame()) {
        frame = std::move(*next);
        return Received::kFrame;
      }
    } catch (const ProtocolError& garbage) {
      error = garbage.what();
      return Received::kGarbage;
    }
    if (util::Clock::now() >= deadline) return Received::kTimedOut;
    if (process::wait_for_link(connection.fd(), false, signals_, deadline).readable &&
        !connection.receive(util::Clock::now())) {
      // Closed: whatever whole frame arrived before the close still counts.
      try {
        if (auto last = connection.next_frame()) {
          frame = std::move(*last);
          return Received::kFrame;
        }
      } catch (const ProtocolError&) {
      }
      return Received::kClosed;
    }
  }
}

void ServiceDialer::wait_for_signal_until(util::Clock::time_point when) {
  process::sleep_unless_stopped(signals_, when);
}

void ServiceDialer::check_signals() { process::throw_if_stopped(signals_); }

void ServiceDialer::adopt_slot(int slot) { settings_.node_rank = slot; }

std::string ServiceDialer::self() const {
  if (settings_.node_rank < 0) return "this launcher (its node rank comes by arrival)";
  return fmt::format("node {}", settings_.node_rank);
}

}  // namespace dlaunch::rendezvous
