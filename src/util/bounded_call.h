// A call that may hang, given a deadline: reads of a shared file system
// (an NFS server that went away blocks a read for minutes, uninterruptibly)
// made where a late answer is worth no more than none.
//
// WORK runs on a thread of its own; the caller waits at most LIMIT. A call
// that overruns is abandoned: its thread runs on, detached, and whatever it
// returns is dropped. No library offers this for a blocking syscall: a
// std::async future would wait for the thread in its destructor, the very
// wait this avoids.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

namespace dlaunch::util {

// WORK's result, or nullopt when it took longer than LIMIT, threw, or no
// thread could be started.
template <typename T>
std::optional<T> call_within(std::chrono::milliseconds limit, std::function<T()> work) {
  struct Shared {
    std::mutex mutex;
    std::condition_variable done;
    bool finished = false;
    std::optional<T> value;
  };
  auto shared = std::make_shared<Shared>();
  try {
    std::thread([shared, work = std::move(work)] {
      std::optional<T> value;
      try {
        value = work();
      } catch (...) {
      }
      std::lock_guard lock(shared->mutex);
      shared->value = std::move(value);
      shared->finished = true;
      shared->done.notify_all();
    }).detach();
  } catch (const std::system_error&) {
    return std::nullopt;
  }
  std::unique_lock lock(shared->mutex);
  if (!shared->done.wait_for(lock, limit, [&] { return shared->finished; })) return std::nullopt;
  return std::move(shared->value);
}

}  // namespace dlaunch::util
