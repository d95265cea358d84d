// The small pieces every epoll loop here repeats: watching a descriptor,
// and arming a one-shot timerfd.
#pragma once

#include <chrono>
#include <cstdint>
#include <sys/epoll.h>

namespace dlaunch {

// Adds FD to the epoll set EPOLL for EVENTS, tagged with DATA. Throws
// SystemError when the kernel refuses.
void watch_fd(int epoll, int fd, std::uint32_t events, epoll_data_t data);

// Arms the timerfd TIMER to fire once, DELAY from now (at least 1 ms: a
// zero would disarm it instead).
void arm_once(int timer, std::chrono::milliseconds delay);

}  // namespace dlaunch
