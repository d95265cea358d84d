// The one event loop of dlaunch: the supervisor, dlaunch ssh's sessions
// and node 0's rendezvous service each run one.
//
// It waits in epoll_wait and nowhere else, so a loop that relays output
// also reads signals and sends heartbeats on time. What it offers, each
// for a reason its users have:
//   watch / unwatch      a handler per descriptor (pipes, sockets, the
//                        signalfd, a console with a backlog). A handler may
//                        unwatch any descriptor, itself included, while the
//                        loop dispatches: an unwatched handler never runs
//                        again, not even for an event of the batch at hand
//                        (a peer closed by an earlier event of that batch).
//   set_events           EPOLLOUT on and off: a socket or console is watched
//                        for room only while it has bytes waiting, or it
//                        would wake the loop endlessly.
//   at / cancel          one-shot deadlines on the monotonic clock: grace
//                        periods, heartbeats, the drain and join deadlines.
//                        They replace timerfds and hand-computed timeouts.
//   stop                 from any thread: ends run_until() (the rendezvous
//                        service's thread is stopped so).
//   run_once / run_until one batch, or batches until a condition holds.
// A batch is bounded: at most max_events descriptors, then the deadlines
// that were due when it began. A signal interrupting the wait (EINTR) is
// an empty batch.
//
// The loop belongs to one thread; only stop() may be called from others.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <sys/epoll.h>
#include <unordered_map>
#include <utility>
#include <vector>

#include "util/fd.h"

namespace dlaunch::process {

class EventLoop {
 public:
  using Clock = std::chrono::steady_clock;
  // Gets the events epoll reported: EPOLLIN, EPOLLOUT, EPOLLHUP, EPOLLERR.
  using Handler = std::function<void(std::uint32_t events)>;

  // A deadline armed with at(); a default-made Timer names none.
  class Timer {
   public:
    Timer() = default;
    explicit operator bool() const { return sequence_ != 0; }

   private:
    friend class EventLoop;
    Timer(Clock::time_point when, std::uint64_t sequence) : when_(when), sequence_(sequence) {}
    Clock::time_point when_{};
    std::uint64_t sequence_ = 0;
  };

  // MAX_EVENTS: descriptors handled per batch at the most. Throws
  // SystemError when the kernel gives no epoll or eventfd descriptor.
  explicit EventLoop(int max_events = 64);
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  // Calls HANDLER when FD is ready for EVENTS (EPOLLIN, EPOLLOUT or both;
  // hang-ups and errors are always reported). Unwatch FD before closing
  // it. Throws SystemError when epoll refuses FD (a regular file, a
  // descriptor watched already).
  void watch(int fd, std::uint32_t events, Handler handler);
  // Watches FD for EVENTS instead; nothing when FD is not watched.
  void set_events(int fd, std::uint32_t events);
  // Stops watching FD; its handler is not called again. Nothing when FD
  // is not watched.
  void unwatch(int fd);
  bool watching(int fd) const { return watches_.count(fd) > 0; }

  // Calls CALLBACK once, in the first batch at or after WHEN; deadlines
  // due together run in the order they were armed.
  Timer at(Clock::time_point when, std::function<void()> callback);
  // Disarms TIMER; nothing when it already ran, was cancelled, or is none.
  void cancel(Timer& timer);

  // Waits for events until the next deadline, or TIMEOUT at the most when
  // given, then runs the handlers of what is ready and the deadlines due.
  // Returns how many handlers ran (deadlines not counted). What a handler
  // or deadline throws propagates; the loop stays usable.
  int run_once(std::optional<std::chrono::milliseconds> timeout = std::nullopt);
  // Runs batches until DONE() holds or stop() was called. DONE is asked
  // before every wait, so it is also the place for what follows a batch as
  // a whole (watching a console its handlers left with a backlog).
  void run_until(const std::function<bool()>& done);

  // Thread-safe: makes run_until() return once the handler running now (if
  // any) returns; later batches are not dispatched.
  void stop();
  bool stopped() const { return stop_.load(std::memory_order_acquire); }

 private:
  struct Watch {
    int fd;
    std::uint32_t events;
    Handler handler;
    bool removed = false;
  };

  void retire(std::unique_ptr<Watch> watch);
  int wait_timeout(std::optional<std::chrono::milliseconds> timeout) const;
  int dispatch(int count);
  void run_due_deadlines();

  util::Fd epoll_;
  util::Fd wake_;  // an eventfd: stop() makes it readable
  std::vector<epoll_event> events_;
  // Keyed by descriptor; epoll's data points at the Watch, which stays
  // allocated (in retired_) until the batch that may still name it is over.
  std::unordered_map<int, std::unique_ptr<Watch>> watches_;
  std::vector<std::unique_ptr<Watch>> retired_;
  std::map<std::pair<Clock::time_point, std::uint64_t>, std::function<void()>> deadlines_;
  std::uint64_t next_sequence_ = 1;
  std::atomic<bool> stop_{false};
};

}  // namespace dlaunch::process
