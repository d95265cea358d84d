// TCP sockets with deadlines.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <sys/socket.h>
#include <vector>

#include "util/fd.h"

namespace dlaunch::util {

using Clock = std::chrono::steady_clock;

// A listening socket on every interface at PORT (0: any free port), IPv4
// and IPv6 together where the host has IPv6 (util/socket.cc says why),
// with SO_REUSEADDR so a restarted job can take its port back at once.
// Throws SystemError naming the port when it cannot be bound.
Fd listen_tcp(int port);

// The local port a bound socket got.
int bound_port(int fd);

// One address HOST:PORT resolved to.
struct TcpAddress {
  sockaddr_storage address{};
  socklen_t size = 0;
  std::string text;  // "10.0.0.1:29500", "[fe80::1]:29500"
};

// Every address HOST:PORT resolves to, in the resolver's order. Throws
// SystemError when HOST cannot be resolved at all.
std::vector<TcpAddress> resolve_tcp(const std::string& host, int port);

// True when HOST resolves to an address of this host (loopback included),
// so that a socket here can listen on it; false when it names another host
// or does not resolve.
bool names_this_host(const std::string& host);

// One connection attempt to ADDRESS that gives up at DEADLINE. Returns an
// invalid Fd when the peer refused or did not answer in time (errno set).
// The socket is non-blocking, with TCP_NODELAY.
Fd try_connect_address(const TcpAddress& address, Clock::time_point deadline);

// One connection attempt to HOST:PORT (its addresses in turn) that gives up
// at DEADLINE. Returns an invalid Fd when the peer refused or did not answer
// in time (errno set); throws SystemError when HOST cannot be resolved at all.
Fd try_connect_tcp(const std::string& host, int port, Clock::time_point deadline);

// Sends all of BYTES on socket FD (blocking or not) without raising
// SIGPIPE. Returns false when the peer is gone, or when it has taken nothing
// for STALL_LIMIT: a peer that does not read is treated as gone, so one
// stalled peer cannot hold a service thread forever.
bool send_all(int fd, std::string_view bytes, std::chrono::milliseconds stall_limit);

// "10.0.0.3:41234": the address of the peer of connected socket FD, for
// messages; "an unknown address" when it cannot be read.
std::string peer_address(int fd);
// The peer's IP address alone ("10.0.0.5", "fe80::1"): what another host
// dials to reach it. Empty when the socket has no IP peer.
std::string peer_ip(int fd);

// Sends small messages at once instead of waiting to fill a segment (Nagle):
// heartbeats and stop requests are latency-bound.
void set_no_delay(int fd);

// Milliseconds from now until DEADLINE, for poll(): never negative.
int millis_until(Clock::time_point deadline);

}  // namespace dlaunch::util
