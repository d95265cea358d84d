// A child's stdout and stderr, relayed: each pipe read in an event loop and
// fed to its StreamRelay (console lines, log file), with the last lines of
// both kept for a failure summary. A worker's output under the supervisor
// and a host's under dlaunch ssh are relayed so.
//
// Backpressure: a pipe whose console is full (util::ConsoleOverflow::kBlock)
// is not read, so the child's writes wait as they would on a slow terminal,
// while the loop goes on with everything else; resume_if_room() reads it
// again once the console has room. A line held in part is shown when its
// relay says (StreamRelay::partial_due), on a deadline of the loop.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "process/event_loop.h"
#include "process/stream_relay.h"
#include "util/fd.h"

namespace dlaunch::process {

class ChildOutput {
 public:
  // The relays of stdout (OUT) and stderr (ERR), each console line led by
  // PREFIX; their tail is this output's. Made before the child starts, a
  // log file that could not be created is reported at once
  // (Outputs::on_file_fault).
  ChildOutput(const std::string& prefix, StreamRelay::Outputs out, StreamRelay::Outputs err);
  // Stops watching the pipes still open.
  ~ChildOutput();
  ChildOutput(const ChildOutput&) = delete;
  ChildOutput& operator=(const ChildOutput&) = delete;

  // Reads the child's pipes (stdout, stderr) in LOOP, which must outlive
  // this, through BUFFER (one serves every pipe of a loop: it reads one at
  // a time). ON_CLOSED runs when a pipe ends (end of file, or a read error):
  // its relay finished and the pipe closed.
  void relay(EventLoop& loop, util::Fd stdout_pipe, util::Fd stderr_pipe, std::span<char> buffer,
             std::function<void()> on_closed);
  // Called after each chunk read from either pipe (the worker made
  // progress, for --hang-timeout).
  void on_output(std::function<void()> callback) { on_output_ = std::move(callback); }
  // Relays what the pipes hold now, without waiting, and closes them: a
  // writer that escaped the child's group may hold them open for ever.
  void drain_and_close();

  // Call before each wait of the loop: reads again the pipes held back
  // while their console was full, once it has room.
  void resume_if_room();
  // Whether a pipe is held back now (its child may be waiting to write).
  bool held_back() const { return held_back_[0] || held_back_[1]; }

  // 0: stdout, 1: stderr.
  const StreamRelay& stream(int index) const { return *relays_[index]; }
  const OutputTail& tail() const { return tail_; }

 private:
  void on_readable(int stream);
  void watch(int stream);
  void hold_back(int stream);
  void follow_partial(int stream);
  void on_partial_due(int stream);
  void close(int stream);

  OutputTail tail_;  // before the relays, which point at it
  std::unique_ptr<StreamRelay> relays_[2];
  util::Fd pipes_[2];
  bool held_back_[2] = {false, false};
  EventLoop::Timer partial_timers_[2];
  EventLoop* loop_ = nullptr;
  std::span<char> buffer_;
  std::function<void()> on_closed_;
  std::function<void()> on_output_;
};

}  // namespace dlaunch::process
