#include "process/signal_channel.h"

#include <cerrno>
#include <cstring>
#include <sys/signalfd.h>
#include <unistd.h>

#include "util/error.h"

namespace dlaunch::process {
namespace {

sigset_t channel_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGCHLD);
  for (int forwarded : SignalChannel::kForwarded) sigaddset(&set, forwarded);
  return set;
}

}  // namespace

SignalChannel::SignalChannel() {
  sigset_t set = channel_signals();
  if (sigprocmask(SIG_BLOCK, &set, &previous_mask_) != 0)
    throw util::system_error("cannot block signals", errno);
  fd_.reset(signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK));
  if (!fd_) throw util::system_error("cannot create a signalfd", errno);
}

SignalChannel::~SignalChannel() { sigprocmask(SIG_SETMASK, &previous_mask_, nullptr); }

std::optional<int> SignalChannel::next() {
  signalfd_siginfo info;
  ssize_t got = util::read_retrying(fd_.get(), &info, sizeof(info));
  if (got != static_cast<ssize_t>(sizeof(info))) return std::nullopt;
  int signal = static_cast<int>(info.ssi_signo);
  if (signal > 0 && signal <= kLastSignal) ++received_[static_cast<std::size_t>(signal)];
  return signal;
}

unsigned SignalChannel::received(int signal) const {
  if (signal <= 0 || signal > kLastSignal) return 0;
  return received_[static_cast<std::size_t>(signal)];
}

bool SignalChannel::pending(int signal) {
  sigset_t set;
  sigemptyset(&set);
  return ::sigpending(&set) == 0 && sigismember(&set, signal) == 1;
}

bool SignalChannel::stops_job(int signal) {
  return signal == SIGINT || signal == SIGTERM || signal == SIGHUP || signal == SIGQUIT;
}

void SignalChannel::reset_in_child() {
  sigset_t empty;
  sigemptyset(&empty);
  sigprocmask(SIG_SETMASK, &empty, nullptr);
  for (int forwarded : kForwarded) ::signal(forwarded, SIG_DFL);
  ::signal(SIGCHLD, SIG_DFL);
  ::signal(SIGPIPE, SIG_DFL);
}

}  // namespace dlaunch::process
