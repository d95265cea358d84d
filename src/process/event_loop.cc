#include "process/event_loop.h"

#include <algorithm>
#include <cerrno>
#include <sys/eventfd.h>
#include <unistd.h>

#include "util/error.h"

namespace dlaunch::process {

EventLoop::EventLoop(int max_events) : events_(static_cast<std::size_t>(std::max(max_events, 1))) {
  epoll_.reset(::epoll_create1(EPOLL_CLOEXEC));
  if (!epoll_) throw util::system_error("cannot create an event loop (epoll)", errno);
  wake_.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!wake_) throw util::system_error("cannot create an event loop (eventfd)", errno);
  watch(wake_.get(), EPOLLIN, [this](std::uint32_t) {
    std::uint64_t count = 0;
    util::read_retrying(wake_.get(), &count, sizeof(count));
  });
}

EventLoop::~EventLoop() = default;

void EventLoop::watch(int fd, std::uint32_t events, Handler handler) {
  auto entry = std::make_unique<Watch>(Watch{fd, events, std::move(handler)});
  epoll_event event{};
  event.events = events;
  event.data.ptr = entry.get();
  if (::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &event) != 0)
    throw util::system_error("cannot watch a descriptor", errno);
  std::unique_ptr<Watch>& slot = watches_[fd];
  // Still known, yet epoll took it: that descriptor was closed while
  // watched, and this is a new one with its number.
  if (slot) retire(std::move(slot));
  slot = std::move(entry);
}

void EventLoop::set_events(int fd, std::uint32_t events) {
  auto found = watches_.find(fd);
  if (found == watches_.end() || found->second->events == events) return;
  Watch& watch = *found->second;
  watch.events = events;
  epoll_event event{};
  event.events = events;
  event.data.ptr = &watch;
  ::epoll_ctl(epoll_.get(), EPOLL_CTL_MOD, fd, &event);
}

void EventLoop::unwatch(int fd) {
  auto found = watches_.find(fd);
  if (found == watches_.end()) return;
  ::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, fd, nullptr);
  retire(std::move(found->second));
  watches_.erase(found);
}

// Kept until the next batch: it may be the handler running now, and events
// of this batch may still point at it.
void EventLoop::retire(std::unique_ptr<Watch> watch) {
  watch->removed = true;
  retired_.push_back(std::move(watch));
}

EventLoop::Timer EventLoop::at(Clock::time_point when, std::function<void()> callback) {
  std::uint64_t sequence = next_sequence_++;
  deadlines_.emplace(std::make_pair(when, sequence), std::move(callback));
  return Timer(when, sequence);
}

void EventLoop::cancel(Timer& timer) {
  if (timer) deadlines_.erase({timer.when_, timer.sequence_});
  timer = Timer();
}

int EventLoop::run_once(std::optional<std::chrono::milliseconds> timeout) {
  retired_.clear();  // no event of an earlier batch can name them any more
  int count = ::epoll_wait(epoll_.get(), events_.data(), static_cast<int>(events_.size()),
                           wait_timeout(timeout));
  if (count < 0) {
    if (errno != EINTR) throw util::system_error("the event loop cannot wait for events", errno);
    count = 0;
  }
  int handled = dispatch(count);
  run_due_deadlines();
  return handled;
}

void EventLoop::run_until(const std::function<bool()>& done) {
  while (!stopped() && !done()) run_once();
}

void EventLoop::stop() {
  stop_.store(true, std::memory_order_release);
  std::uint64_t one = 1;
  ssize_t written = ::write(wake_.get(), &one, sizeof(one));
  (void)written;  // only fails when the counter is full: the loop is awake then
}

// Until the next deadline, rounded up (waking before it would only wait
// again), or TIMEOUT when that is sooner; -1: no limit.
int EventLoop::wait_timeout(std::optional<std::chrono::milliseconds> timeout) const {
  std::optional<std::chrono::milliseconds> wait = timeout;
  if (!deadlines_.empty()) {
    auto left = std::chrono::ceil<std::chrono::milliseconds>(deadlines_.begin()->first.first - Clock::now());
    wait = wait ? std::min(*wait, left) : left;
  }
  if (!wait) return -1;
  return static_cast<int>(std::clamp<std::int64_t>(wait->count(), 0, 1 << 30));
}

int EventLoop::dispatch(int count) {
  int handled = 0;
  for (int i = 0; i < count && !stopped(); ++i) {
    Watch* watch = static_cast<Watch*>(events_[static_cast<std::size_t>(i)].data.ptr);
    if (watch->removed) continue;  // unwatched by an earlier handler of this batch
    watch->handler(events_[static_cast<std::size_t>(i)].events);
    ++handled;
  }
  return handled;
}

// The deadlines due now, in order. One armed by a callback here waits for
// the next batch, so a deadline that re-arms itself cannot hold the loop.
void EventLoop::run_due_deadlines() {
  if (deadlines_.empty() || stopped()) return;
  auto now = Clock::now();
  if (deadlines_.begin()->first.first > now) return;
  std::vector<std::pair<Clock::time_point, std::uint64_t>> due;
  for (auto it = deadlines_.begin(); it != deadlines_.end() && it->first.first <= now; ++it)
    due.push_back(it->first);
  for (const auto& key : due) {
    auto node = deadlines_.extract(key);
    if (node.empty()) continue;  // cancelled by an earlier callback
    node.mapped()();
    if (stopped()) return;
  }
}

}  // namespace dlaunch::process
