// The connections of node 0's rendezvous service, as connections: accepting
// them, holding the ones that have not proved the job's token yet within a
// bound (a flood closes the oldest of them, never a launcher that proved
// itself), sending and flushing without blocking, and closing and freeing
// them safely while callbacks may still name them.
//
// What a connection says and what the job makes of it is the service's loop
// (PeerTableHost): this part knows nothing of rounds, ranks or the protocol
// beyond the frame size a connection may send before it proved itself.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "process/event_loop.h"
#include "service/service_peer.h"
#include "util/socket.h"
#include "util/fd.h"

namespace dlaunch::rendezvous {

// What the table asks of the loop that gives the connections their meaning.
class PeerTableHost {
 public:
  virtual ~PeerTableHost() = default;
  // A new connection is held, unproven: the host greets it (its challenge).
  virtual void on_connected(Peer& peer, util::Clock::time_point now) = 0;
  // PEER's socket is readable, writable, or hung up (EVENTS: epoll's).
  virtual void on_peer_event(Peer& peer, std::uint32_t events) = 0;
  // PEER was closed, by either side: the host forgets whatever names it.
  virtual void on_closed(Peer& peer) = 0;
  virtual void log(const std::string& line) = 0;
};

struct PeerTableSettings {
  // Unproven connections held at once; beyond it the oldest is closed.
  std::size_t max_unproven = 16;
  // How long a connection may take to prove the job's token.
  std::chrono::milliseconds handshake_timeout{10'000};
};

class PeerTable {
 public:
  // Accepts on LISTENER (bound and listening) from EVENTS' loop.
  PeerTable(util::Fd listener, PeerTableSettings settings, process::EventLoop& events, PeerTableHost& host);
  ~PeerTable();
  PeerTable(const PeerTable&) = delete;
  PeerTable& operator=(const PeerTable&) = delete;

  // PEER proved the token: it is no longer counted among the unproven, and
  // may send frames of any size the protocol allows.
  void mark_proven(Peer& peer);

  // Queues FRAME for PEER; a connection that cannot take it is closed.
  void send_frame(Peer& peer, const std::string& frame, util::Clock::time_point now);
  // Writes what PEER's outbox holds; false when its connection broke (the
  // caller decides what the loss means).
  bool flush(Peer& peer, util::Clock::time_point now);
  // Closes PEER now; it is freed by free_closed(), once no call stack names it.
  void close(Peer& peer);
  void free_closed();

  // Closes PEER when it has not proved the token within the handshake
  // timeout at NOW, and says so. True when it was closed.
  bool close_if_handshake_overdue(Peer& peer, util::Clock::time_point now);

  // Logs a refused or dropped connection, up to a bound: past it, one line
  // says so and the log goes quiet (a flood must not flood the log).
  void log_refusal(const std::string& message);

  // Calls VISIT for every connection not closed (it may close them).
  void for_each_open(const std::function<void(Peer&)>& visit);

 private:
  void accept_waiting();
  void hold(util::Fd socket, util::Clock::time_point now);
  void evict_oldest_unproven();
  bool make_room_for_a_connection();
  void update_watch(Peer& peer);

  util::Fd listener_;
  PeerTableSettings settings_;
  process::EventLoop& events_;
  PeerTableHost& host_;
  std::unordered_map<Peer*, std::unique_ptr<Peer>> peers_;
  std::vector<Peer*> closed_;
  std::list<Peer*> unproven_;  // oldest first
  util::Fd spare_fd_;          // given up to accept (and close) a connection when out of descriptors
  int refusals_ = 0;
};

}  // namespace dlaunch::rendezvous
