#include "util/event_fds.h"

#include <algorithm>
#include <cerrno>
#include <sys/timerfd.h>

#include "util/error.h"

namespace dlaunch {

void watch_fd(int epoll, int fd, std::uint32_t events, epoll_data_t data) {
  epoll_event event{};
  event.events = events;
  event.data = data;
  if (::epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event) != 0)
    throw system_error("cannot watch a descriptor", errno);
}

void arm_once(int timer, std::chrono::milliseconds delay) {
  itimerspec spec{};
  auto millis = std::max<std::int64_t>(delay.count(), 1);
  spec.it_value.tv_sec = static_cast<time_t>(millis / 1000);
  spec.it_value.tv_nsec = static_cast<long>((millis % 1000) * 1'000'000);
  ::timerfd_settime(timer, 0, &spec, nullptr);
}

}  // namespace dlaunch
