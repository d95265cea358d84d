// Whether this process itself stopped running for a while: SIGSTOP (a
// debugger, `kill -STOP`, Slurm's suspend), a host that hung (a kernel
// stall, a D-state driver), a virtual machine paused.
//
// The monotonic clock runs on through all of these, so a process cannot
// tell from the clock alone that it was not running. A loop that never
// sleeps longer than its own deadlines can: when the time between two of
// its wakes is far longer than it asked to sleep, it was stopped. The
// rendezvous needs to know, for two reasons. Silence it measures across
// its own stall is not the peer's fault: every peer went quiet for it at
// once (a whole job suspended and resumed must not lose every node). And a
// link that fails right after its own stall is the other side giving up on
// this process, not the other side dying: a launcher must then stop, not
// take over.
#pragma once

#include <chrono>
#include <optional>

namespace dlaunch::process {

class StallWatch {
 public:
  using Clock = std::chrono::steady_clock;

  // A stall is a gap of at least THRESHOLD between two looks; a loop that
  // wakes at least every THRESHOLD / 2 never reports one while it runs.
  explicit StallWatch(std::chrono::milliseconds threshold, Clock::time_point now = Clock::now());

  // Called at every wake of the loop (and may be called more often). When
  // the gap since the last look was a stall, it is remembered and returned.
  std::optional<std::chrono::milliseconds> look(Clock::time_point now);

  // The last stall, if it ended within WINDOW before NOW.
  struct Stall {
    Clock::time_point ended;
    std::chrono::milliseconds length;
  };
  std::optional<Stall> recent(Clock::time_point now, std::chrono::milliseconds window) const;

  // When this process last resumed after a stall (the start if never):
  // silence is counted from here at the earliest.
  Clock::time_point resumed() const { return resumed_; }

  std::chrono::milliseconds threshold() const { return threshold_; }
  void set_threshold(std::chrono::milliseconds threshold) { threshold_ = threshold; }

 private:
  std::chrono::milliseconds threshold_;
  Clock::time_point last_look_;
  Clock::time_point resumed_;
  std::optional<Stall> last_;
};

// The threshold the rendezvous uses for HEARTBEAT_TIMEOUT: half of it (its
// loops wake every quarter at the latest), and never under a second, so a
// busy machine's scheduling delays never count as a stall.
std::chrono::milliseconds stall_threshold(std::chrono::milliseconds heartbeat_timeout);

}  // namespace dlaunch::process
