#include "util/console_watch.h"

#include <algorithm>
#include <sys/epoll.h>

namespace dlaunch {

ConsoleWatch::ConsoleWatch(int epoll, std::vector<ConsoleSink*> sinks, std::uint64_t tag)
    : epoll_(epoll), tag_(tag) {
  for (ConsoleSink* sink : sinks) {
    bool known = std::any_of(consoles_.begin(), consoles_.end(),
                             [&](const Watched& watched) { return watched.sink == sink; });
    if (sink != nullptr && !known) consoles_.push_back(Watched{sink});
  }
}

ConsoleWatch::~ConsoleWatch() {
  for (std::size_t i = 0; i < consoles_.size(); ++i) set(consoles_[i], i, -1);
}

void ConsoleWatch::update() {
  for (std::size_t i = 0; i < consoles_.size(); ++i) {
    ConsoleSink& sink = *consoles_[i].sink;
    set(consoles_[i], i, sink.backlogged() ? sink.watch_fd() : -1);
  }
}

void ConsoleWatch::on_writable(std::size_t index) {
  if (index < consoles_.size()) consoles_[index].sink->flush();
}

void ConsoleWatch::set(Watched& watched, std::size_t index, int fd) {
  if (watched.fd == fd) return;
  if (watched.fd >= 0) ::epoll_ctl(epoll_, EPOLL_CTL_DEL, watched.fd, nullptr);
  watched.fd = -1;
  if (fd < 0 || fd == watched.refused) return;
  epoll_event event{};
  event.events = EPOLLOUT;
  event.data.u64 = tag_ | index;
  if (::epoll_ctl(epoll_, EPOLL_CTL_ADD, fd, &event) == 0) watched.fd = fd;
  else watched.refused = fd;
}

}  // namespace dlaunch
