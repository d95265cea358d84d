#include "process/link_wait.h"

#include <algorithm>
#include <poll.h>
#include <vector>

#include "util/error.h"

namespace dlaunch::process {

LinkWake wait_for_link(int fd, bool want_writable, SignalChannel& signals, util::Clock::time_point wake,
                       std::span<const int> others) {
  short events = static_cast<short>(POLLIN | (want_writable ? POLLOUT : 0));
  std::vector<pollfd> fds = {{fd, events, 0}, {signals.fd(), POLLIN, 0}};
  for (int other : others) fds.push_back({other, POLLIN, 0});
  ::poll(fds.data(), fds.size(), util::millis_until(wake));
  if (fds[1].revents != 0) throw_if_stopped(signals);
  LinkWake woke;
  woke.readable = (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0;
  woke.writable = (fds[0].revents & POLLOUT) != 0;
  woke.other = std::any_of(fds.begin() + 2, fds.end(), [](const pollfd& other) { return other.revents != 0; });
  return woke;
}

void sleep_unless_stopped(SignalChannel& signals, util::Clock::time_point when) {
  pollfd signal_fd{signals.fd(), POLLIN, 0};
  while (::poll(&signal_fd, 1, util::millis_until(when)) > 0) throw_if_stopped(signals);
}

void throw_if_stopped(SignalChannel& signals) {
  while (auto signal = signals.next()) {
    if (SignalChannel::stops_job(*signal)) throw util::Interrupted{*signal};
  }
}

}  // namespace dlaunch::process
