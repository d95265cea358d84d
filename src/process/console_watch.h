// Lets an event loop write a stalled console's backlog as soon as the
// console has room again.
//
// Each console is watched for EPOLLOUT while, and only while, it has a
// backlog: a console with room would otherwise wake the loop endlessly.
#pragma once

#include <vector>

#include "process/event_loop.h"
#include "util/console.h"

namespace dlaunch::process {

class ConsoleWatch {
 public:
  // Watches SINKS (a sink given twice is watched once) in LOOP, which must
  // outlive it.
  ConsoleWatch(EventLoop& loop, const std::vector<util::ConsoleSink*>& sinks);
  ~ConsoleWatch();
  ConsoleWatch(const ConsoleWatch&) = delete;
  ConsoleWatch& operator=(const ConsoleWatch&) = delete;

  // Call before each wait (writes of the last batch, or of another thread,
  // may have left a backlog): watches the consoles that have a backlog now,
  // and stops watching those that have none. A console epoll refuses is
  // left to later writes and the final drain.
  void update();

 private:
  struct Watched {
    util::ConsoleSink* sink;
    int fd = -1;       // the descriptor watched, -1 when none
    int refused = -1;  // a descriptor epoll would not take: not asked again
  };
  void set(Watched& watched, int fd);

  EventLoop& loop_;
  std::vector<Watched> consoles_;
};

}  // namespace dlaunch::process
