// The launcher's signals, delivered as readable events instead of handlers.
//
// While a SignalChannel lives, SIGCHLD and the forwarded signals are blocked
// and arrive through a signalfd, so the supervisor's single event loop sees
// them in order with worker output and rendezvous messages, and no code runs
// in signal-handler context.
#pragma once

#include <array>
#include <csignal>
#include <optional>
#include <string_view>

#include "util/fd.h"

namespace dlaunch::process {

class SignalChannel {
  static constexpr int kLastSignal = 64;

 public:
  // Blocks the signals and opens the descriptor. Throws SystemError.
  SignalChannel();
  ~SignalChannel();
  SignalChannel(const SignalChannel&) = delete;
  SignalChannel& operator=(const SignalChannel&) = delete;

  int fd() const { return fd_.get(); }
  // The next pending signal, or nullopt when none is pending.
  std::optional<int> next();

  // How often SIGNAL has been read from this channel, by whoever read it
  // (the supervisor, a wait in the rendezvous): a signal that only warns
  // (--preempt-signal) is not lost when a wait that ignores it reads it.
  unsigned received(int signal) const;
  // SIGNAL is blocked and waiting to be read.
  static bool pending(int signal);

  // Signals forwarded to every worker group when the launcher receives them.
  static constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
  // Of those, the ones that also mean "stop the job".
  static bool stops_job(int signal);

  // In a freshly forked child, before exec: restore the default mask and
  // dispositions so workers see signals normally. Async-signal-safe.
  static void reset_in_child();

 private:
  sigset_t previous_mask_{};
  util::Fd fd_;
  std::array<unsigned, kLastSignal + 1> received_{};
};

}  // namespace dlaunch::process
