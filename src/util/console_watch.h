// Lets an epoll loop write a stalled console's backlog as soon as the
// console has room again.
//
// Each console is watched for EPOLLOUT while, and only while, it has a
// backlog: a console with room would otherwise wake the loop endlessly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "util/console.h"

namespace dlaunch {

class ConsoleWatch {
 public:
  // Watches SINKS (a sink given twice is watched once) in the epoll set
  // EPOLL; the event data of the I-th is TAG | I.
  ConsoleWatch(int epoll, std::vector<ConsoleSink*> sinks, std::uint64_t tag);
  ~ConsoleWatch();
  ConsoleWatch(const ConsoleWatch&) = delete;
  ConsoleWatch& operator=(const ConsoleWatch&) = delete;

  // Call after each batch of events: watches the consoles that have a
  // backlog now, and stops watching those that have none. A console epoll
  // refuses is left to later writes and the final drain.
  void update();
  // The I-th console is writable (or failed): writes what it takes.
  void on_writable(std::size_t index);

 private:
  struct Watched {
    ConsoleSink* sink;
    int fd = -1;       // the descriptor in the epoll set, -1 when not watched
    int refused = -1;  // a descriptor epoll would not take: not asked again
  };
  void set(Watched& watched, std::size_t index, int fd);

  int epoll_;
  std::uint64_t tag_;
  std::vector<Watched> consoles_;
};

}  // namespace dlaunch
