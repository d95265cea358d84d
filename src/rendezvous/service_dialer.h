// How a launcher reaches node 0's rendezvous service and makes node 0 prove
// itself before trusting anything it says.
//
// One attempt: connect to one of the master address's addresses, take the
// Challenge, send the Join (with this launcher's nonce and proof), and wait
// for the Welcome. With a token the Welcome must carry node 0's tag under the
// session key (wire/session.h), which only a holder of the token can
// make; a peer that cannot prove it — a stranger holding the port, a silent
// listener, another program — is not believed: the launcher says what it saw
// in one line naming the address, and tries again (the next address, then
// with backoff) until the rendezvous deadline. Only node 0 itself, proved,
// can end the job early (a sealed Abort). Without a token nothing can be
// proved, and a refusal is taken at its word, as before.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <set>
#include <string>

#include "process/signal_channel.h"
#include "rendezvous/coordinator.h"
#include "service/waiting_status.h"
#include "wire/protocol.h"
#include "wire/service_link.h"

namespace dlaunch::rendezvous {

struct DialSettings {
  std::string master_addr;
  int port = 0;
  int node_rank = 0;  // this launcher's slot; -1: none yet (by arrival), node 0 gives one
  std::optional<std::string> token;  // nullopt: node 0 cannot be authenticated
  std::chrono::milliseconds handshake_timeout{kDefaultHandshakeTimeout};
  std::chrono::milliseconds rendezvous_timeout{300'000};  // for messages only
  // Told each new thing seen on the way (a silent listener, an unproved
  // refusal), once, and the waiting lines; default: a line on stderr.
  std::function<void(const std::string&)> notice;
  // Whom the dial waits for, in the waiting lines: node 0, or the launcher
  // that took over its rendezvous.
  std::string service_name = "node 0";
  // When a launcher that has not reached the service yet says so.
  WaitingSchedule waiting_lines;
};

// A link to node 0, proved, node 0's heartbeat timeout from the Welcome, and
// the slot it has this launcher in (the one its Join named, or the first
// free one for a Join that asked for any).
struct Dialed {
  ServiceLink link;
  std::chrono::milliseconds heartbeat_timeout;
  int slot = 0;
};

class ServiceDialer {
 public:
  // SIGNALS lets every wait end when the launcher is told to stop.
  ServiceDialer(DialSettings settings, process::SignalChannel& signals);

  // Dials node 0 and completes the handshake with JOIN (nonce and proof
  // added here), trying again until DEADLINE. Throws SystemError when node 0,
  // proved, refused this launcher (its reason) or when DEADLINE passed
  // (naming what was seen); InputError when node 0 requires a token and
  // this launcher has none, or the master address does not resolve;
  // Interrupted on a stop signal.
  Dialed dial(const JoinMessage& join, util::Clock::time_point deadline);

  // Records WHAT, seen on a link after the handshake (it closed before the
  // World): noticed once, and named if the deadline passes.
  void saw(const std::string& what);

  // Sleeps until WHEN, unless a stop signal arrives (then throws Interrupted).
  void wait_for_signal_until(util::Clock::time_point when);

  // This launcher's node rank came by arrival and is SLOT from now on.
  void adopt_slot(int slot);

 private:
  struct Attempt;
  enum class Received { kFrame, kTimedOut, kClosed, kGarbage };
  // The next frame from CONNECTION, waiting until DEADLINE; ERROR says why
  // the bytes were garbage.
  Received receive_frame(PeerConnection& connection, util::Clock::time_point deadline, Frame& frame,
                         std::string& error);
  Attempt attempt(const util::TcpAddress& address, const JoinMessage& join, util::Clock::time_point deadline);
  Attempt handshake(PeerConnection& connection, const std::string& address, const JoinMessage& join,
                    util::Clock::time_point deadline);
  Attempt welcome(PeerConnection& connection, Session session, const std::string& address,
                  util::Clock::time_point deadline);
  void send_join(PeerConnection& connection, JoinMessage join, const std::string& challenge,
                 const std::string& nonce, Session* session = nullptr);
  [[noreturn]] void give_up() const;
  // Says whom this launcher waits for and what it met last, when a line is due.
  void say_still_waiting();
  void tell(const std::string& line) const;
  // True once the current dial's deadline has passed.
  bool out_of_time() const;
  void check_signals();
  // "node 2", or what a launcher without a node rank yet is.
  std::string self() const;

  DialSettings settings_;
  process::SignalChannel& signals_;
  std::set<std::string> noticed_;
  std::string last_seen_;
  // What the latest attempt met, a refused connection included: for the
  // waiting lines, not for the error at the deadline.
  std::string latest_;
  util::Clock::time_point deadline_;
  // The wait the waiting lines count: it begins with a dial towards a new
  // deadline (a redial towards the same one goes on with it).
  util::Clock::time_point wait_began_;
  std::chrono::milliseconds next_waiting_line_{0};  // due this long after wait_began_
};

}  // namespace dlaunch::rendezvous
