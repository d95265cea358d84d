#include "process/console_watch.h"

#include <algorithm>

#include "util/error.h"

namespace dlaunch::process {

ConsoleWatch::ConsoleWatch(EventLoop& loop, const std::vector<util::ConsoleSink*>& sinks) : loop_(loop) {
  for (util::ConsoleSink* sink : sinks) {
    bool known = std::any_of(consoles_.begin(), consoles_.end(),
                             [&](const Watched& watched) { return watched.sink == sink; });
    if (sink != nullptr && !known) consoles_.push_back(Watched{sink});
  }
}

ConsoleWatch::~ConsoleWatch() {
  for (Watched& watched : consoles_) set(watched, -1);
}

void ConsoleWatch::update() {
  for (Watched& watched : consoles_) {
    util::ConsoleSink& sink = *watched.sink;
    set(watched, sink.backlogged() ? sink.watch_fd() : -1);
  }
}

void ConsoleWatch::set(Watched& watched, int fd) {
  if (watched.fd == fd) return;
  if (watched.fd >= 0) loop_.unwatch(watched.fd);
  watched.fd = -1;
  if (fd < 0 || fd == watched.refused) return;
  try {
    // Writable (or failed): the sink writes what the console takes.
    loop_.watch(fd, EPOLLOUT, [sink = watched.sink](std::uint32_t) { sink->flush(); });
    watched.fd = fd;
  } catch (const util::SystemError&) {
    watched.refused = fd;
  }
}

}  // namespace dlaunch::process
