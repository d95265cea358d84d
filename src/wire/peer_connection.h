// One rendezvous connection: a launcher's, as node 0's service holds it, or
// node 0's, as a launcher holds it.
//
// Non-blocking both ways: reads yield whole frames, and what the socket does
// not take at once waits in an outbox until the peer reads again, so one
// slow or stalled peer never holds up the event loop. Each receive() reads a
// bounded amount, and the frame reader refuses a header announcing more than
// its limit, so a peer that floods bytes cannot make this end buffer without
// bound or starve the others.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "util/fd.h"
#include "util/socket.h"
#include "wire/protocol.h"

namespace dlaunch::rendezvous {

class PeerConnection {
 public:
  // FD must be a connected, non-blocking stream socket.
  PeerConnection(util::Fd fd, util::Clock::time_point now);

  int fd() const { return fd_.get(); }
  // "10.0.0.3:41234", for the log; looked up on first use, since most
  // connections never need it.
  const std::string& address() const;

  // Reads what the socket holds, up to a fixed budget (a level-triggered
  // poll reports the rest). False when the peer closed the connection or it
  // failed.
  bool receive(util::Clock::time_point now);
  // The longest payload accepted from the peer (kMaxHandshakePayload until
  // it proved itself).
  void set_max_payload(std::uint32_t bytes) { reader_.set_max_payload(bytes); }
  // The next whole frame received, nullopt when more bytes are needed.
  // Throws ProtocolError on a malformed header.
  std::optional<Frame> next_frame() { return reader_.next(); }
  // True while part of a frame has been received but not the rest.
  bool mid_frame() const { return !reader_.empty(); }

  // Queues FRAME and writes what the socket takes now. False when the
  // connection failed.
  bool send(std::string_view frame, util::Clock::time_point now);
  // Writes queued bytes. False when the connection failed.
  bool flush(util::Clock::time_point now);
  bool has_backlog() const { return !outbox_.empty(); }
  // Since when the outbox has held bytes the peer did not take.
  util::Clock::time_point backlog_since() const { return backlog_since_; }

  util::Clock::time_point connected_at() const { return connected_at_; }
  util::Clock::time_point last_heard() const { return last_heard_; }

 private:
  // Writes what the socket takes of BYTES now, without blocking: how many
  // bytes it took, or nullopt when the connection failed.
  std::optional<std::size_t> send_some(std::string_view bytes);

  util::Fd fd_;
  mutable std::string address_;
  FrameReader reader_;
  std::string outbox_;
  std::size_t outbox_sent_ = 0;
  util::Clock::time_point connected_at_;
  util::Clock::time_point last_heard_;
  util::Clock::time_point backlog_since_;
};

}  // namespace dlaunch::rendezvous
