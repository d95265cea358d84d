// TCP sockets with deadlines.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "util/fd.h"

namespace dlaunch {

using Clock = std::chrono::steady_clock;

// A listening socket on every IPv4 interface at PORT (0: any free port),
// with SO_REUSEADDR so a restarted job can take its port back at once.
// Throws SystemError naming the port when it cannot be bound.
Fd listen_tcp(int port);

// The local port a bound socket got.
int bound_port(int fd);

// One connection attempt to HOST:PORT that gives up at DEADLINE. Returns an
// invalid Fd when the peer refused or did not answer in time (errno set);
// throws SystemError when HOST cannot be resolved at all.
Fd try_connect_tcp(const std::string& host, int port, Clock::time_point deadline);

// Sends all of BYTES on socket FD (blocking or not) without raising
// SIGPIPE. Returns false when the peer is gone, or when it has taken nothing
// for STALL_LIMIT: a peer that does not read is treated as gone, so one
// stalled peer cannot hold a service thread forever.
bool send_all(int fd, std::string_view bytes, std::chrono::milliseconds stall_limit);

// Sends small messages at once instead of waiting to fill a segment (Nagle):
// heartbeats and stop requests are latency-bound.
void set_no_delay(int fd);

// Milliseconds from now until DEADLINE, for poll(): never negative.
int millis_until(Clock::time_point deadline);

}  // namespace dlaunch
