// Stopping a node's job when its standard input closes.
//
// `dlaunch ssh` starts every node's launcher through ssh, keeping the
// session's stdin open for the job's life. When dlaunch ssh stops the job,
// dies, or loses the connection, that stdin reaches end-of-file on the
// node; the watch then raises SIGHUP (the hang-up of the controlling
// connection), which the launcher's signal channel handles like any other
// stop signal: workers stopped, the job ended, the reason reported. A
// thread blocks on stdin so the launcher's event loops need no new source.
#pragma once

#include <thread>

#include "util/fd.h"

namespace dlaunch::process {

class StdinWatch {
 public:
  // Starts watching. Construct it after the SignalChannel, so the thread
  // inherits the blocked signal mask and SIGHUP reaches the channel.
  StdinWatch();
  ~StdinWatch();
  StdinWatch(const StdinWatch&) = delete;
  StdinWatch& operator=(const StdinWatch&) = delete;

 private:
  util::Pipe wake_;
  std::thread thread_;
};

}  // namespace dlaunch::process
