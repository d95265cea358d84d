// A stranger, or a node 0 of the test's own making, on node 0's port: the
// rendezvous tests that dial (the coordinator's and the dialer's) drive the
// launcher's side against it, frame by frame.
#pragma once

#include <poll.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "util/fd.h"
#include "util/socket.h"
#include "wire/protocol.h"

namespace dlaunch::rendezvous::test_support {

// A peer on node 0's port, run on a thread: it accepts connections and hands
// each to a script, until it stops.
class FakeNode0 {
 public:
  using Script = std::function<void(util::Fd&)>;
  // Also given the connection's number, from 0.
  using CountedScript = std::function<void(util::Fd&, int)>;

  explicit FakeNode0(Script script)
      : FakeNode0(CountedScript([script = std::move(script)](util::Fd& fd, int) { script(fd); })) {}
  explicit FakeNode0(CountedScript script)
      : listener_(util::listen_tcp(0)), port_(util::bound_port(listener_.get())) {
    thread_ = std::thread([this, script = std::move(script)] {
      for (int count = 0; !stopping_;) {
        pollfd readable{listener_.get(), POLLIN, 0};
        if (::poll(&readable, 1, 20) <= 0) continue;
        util::Fd connection(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
        if (!connection) continue;
        script(connection, count++);
        held_.push_back(std::move(connection));  // closed when the fake stops
      }
    });
  }
  ~FakeNode0() { stop(); }
  FakeNode0(const FakeNode0&) = delete;
  FakeNode0& operator=(const FakeNode0&) = delete;

  // Waits for the script in progress, then closes everything.
  void stop() {
    stopping_ = true;
    if (thread_.joinable()) thread_.join();
    held_.clear();
    listener_.reset();
  }
  int port() const { return port_; }

 private:
  util::Fd listener_;
  int port_;
  std::atomic<bool> stopping_{false};
  std::vector<util::Fd> held_;
  std::thread thread_;
};

// The next whole frame on FD within 2 s; nullopt when it closed or timed out.
inline std::optional<Frame> read_frame(util::Fd& fd) {
  FrameReader reader;
  for (auto give_up = util::Clock::now() + std::chrono::seconds(2); util::Clock::now() < give_up;) {
    if (auto frame = reader.next()) return frame;
    pollfd readable{fd.get(), POLLIN, 0};
    if (::poll(&readable, 1, 20) <= 0) continue;
    char buffer[4096];
    ssize_t got = ::recv(fd.get(), buffer, sizeof(buffer), 0);
    if (got <= 0) return std::nullopt;
    reader.append(std::string_view(buffer, static_cast<std::size_t>(got)));
  }
  return std::nullopt;
}

// Best effort, as a stranger would: the launcher may have hung up already.
inline void send_bytes(util::Fd& fd, const std::string& bytes) {
  ssize_t ignored = ::send(fd.get(), bytes.data(), bytes.size(), MSG_NOSIGNAL);
  (void)ignored;
}

// In GENERATION, the round the sender is in (protocol 7).
inline void send_frame(util::Fd& fd, MessageType type, const std::string& payload, std::uint32_t generation = 0) {
  send_bytes(fd, encode_frame(type, payload, generation));
}

}  // namespace dlaunch::rendezvous::test_support
