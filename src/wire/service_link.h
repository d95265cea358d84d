// A launcher's connection to node 0's rendezvous service, once node 0 has
// proved itself (rendezvous/service_dialer.h makes one).
//
// Every frame both ways goes through the connection's Session (sealed with a
// token). Sends never block: what the socket does not take waits in an
// outbox, and a peer that stops reading shows as a backlog that has not
// moved (backlog_since), which the coordinator counts against the heartbeat.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "wire/peer_connection.h"
#include "wire/session.h"

namespace dlaunch::rendezvous {

class ServiceLink {
 public:
  // CONNECTION to node 0 at ADDRESS ("10.0.0.1:29500"), past the handshake.
  ServiceLink(PeerConnection connection, Session session, std::string address);

  int fd() const { return connection_.fd(); }
  const std::string& address() const { return address_; }

  // Queues a frame of TYPE and writes what the socket takes now, in this
  // launcher's generation. False when the connection failed.
  bool send(MessageType type, std::string_view payload);
  // The round this launcher is in: every frame it sends carries it.
  void set_generation(std::uint32_t generation) { generation_ = generation; }
  // Writes queued bytes. False when the connection failed.
  bool flush() { return connection_.flush(util::Clock::now()); }
  bool has_backlog() const { return connection_.has_backlog(); }
  util::Clock::time_point backlog_since() const { return connection_.backlog_since(); }

  // Reads what arrived (a bounded amount). False when node 0 closed the
  // connection or it failed.
  bool receive() { return connection_.receive(util::Clock::now()); }
  // The next frame node 0 sent, heartbeats aside, its payload checked and
  // unsealed. Throws ProtocolError on a malformed or unauthentic frame.
  std::optional<Frame> next();
  // True while part of a frame has arrived but not the rest.
  bool mid_frame() const { return connection_.mid_frame(); }

  util::Clock::time_point last_heard() const { return connection_.last_heard(); }
  util::Clock::time_point last_sent() const { return last_sent_; }

 private:
  PeerConnection connection_;
  Session session_;
  std::string address_;
  util::Clock::time_point last_sent_;
  std::uint32_t generation_ = 0;
};

}  // namespace dlaunch::rendezvous
