// The end of a reachability probe that every launcher serves: it answers
// another launcher of the job, on any of this host's addresses, with proof
// that this is slot S of the job (survey/probe_dialer.h is the other end).
//
// Node 0's service uses the answers to choose each host's interface by what
// the other hosts actually reach (net/interface_choice.h). A probe is
// authenticated like the rendezvous: this end sends a fresh challenge, the
// prober proves the token over it and its own nonce, and this end proves it
// back, so a stranger's listener on a decoy address cannot pass for a node.
//
// Anyone may connect: each connection gets a short deadline, at most
// kMostProbeConnections are held (a new one closes the oldest), and a
// connection is closed after one exchange, so a flood costs a thread's CPU,
// never memory or the job.
#pragma once

#include <atomic>
#include <chrono>
#include <optional>
#include <atomic>
#include <string>
#include <thread>

#include "util/fd.h"
#include "wire/protocol.h"

namespace dlaunch::rendezvous {

// Who this launcher is to a prober, and what a prober must prove.
struct ProbeIdentity {
  std::string run_id;
  int slot = 0;
  std::optional<std::string> token;  // nullopt: the run id and slot are all that is checked
};

inline constexpr std::size_t kMostProbeConnections = 256;
// A Hello or an Ack is about a hundred bytes: nothing larger is read from a
// probe's peer, at either end.
inline constexpr std::uint32_t kMostProbePayload = 1024;

// Sends one small probe frame on a fresh socket without waiting: the kernel
// takes it whole or the peer is not worth waiting for. Both ends use it.
void send_probe_frame(int fd, MessageType type, const std::string& payload);
inline constexpr std::chrono::milliseconds kProbeHandshakeTimeout{2'000};

class ProbeResponder {
 public:
  // Listens on every IPv4 address of this host, on a port the kernel picks
  // (the Join names it), and serves on a thread of its own. Throws
  // SystemError when no socket can be bound.
  explicit ProbeResponder(ProbeIdentity identity);
  ~ProbeResponder();
  ProbeResponder(const ProbeResponder&) = delete;
  ProbeResponder& operator=(const ProbeResponder&) = delete;

  int port() const { return port_; }

  // This launcher's node rank came by arrival: it answers as SLOT from now
  // on (from any thread; the probes come only after the Welcome gave it).
  void adopt_slot(int slot) { slot_.store(slot, std::memory_order_release); }

 private:
  void serve();

  ProbeIdentity identity_;  // read by the serving thread only, after the start
  std::atomic<int> slot_;
  util::Fd listener_;
  util::Fd wake_;  // an eventfd: the destructor's word to stop
  int port_ = 0;
  std::thread thread_;
};

}  // namespace dlaunch::rendezvous
