// The one wait of every loop that keeps a connection outside an event loop
// (a launcher dialling node 0, keeping its link, `dlaunch stacks` waiting
// for its report): the connection, the launcher's signals and a few more
// descriptors (the gate's check's stdout and stderr), until a deadline. A
// stop signal ends the wait at once.
#pragma once

#include <span>

#include "process/signal_channel.h"
#include "util/socket.h"

namespace dlaunch::process {

// What one wait found ready.
struct LinkWake {
  bool readable = false;  // readable, closed or failed: a receive() will tell which
  bool writable = false;
  bool other = false;  // one of OTHERS: readable, closed or failed
};

// Waits until WAKE for FD (readable; writable too when WANT_WRITABLE),
// SIGNALS and OTHERS (readable; a negative one is skipped, as poll does).
// Throws util::Interrupted when a signal that stops the job arrived (others
// are taken and dropped).
LinkWake wait_for_link(int fd, bool want_writable, SignalChannel& signals, util::Clock::time_point wake,
                       std::span<const int> others = {});

// Sleeps until WHEN unless a stop signal arrives (then throws util::Interrupted).
void sleep_unless_stopped(SignalChannel& signals, util::Clock::time_point when);

// Takes every signal waiting in SIGNALS; throws util::Interrupted for the
// first that stops the job.
void throw_if_stopped(SignalChannel& signals);

}  // namespace dlaunch::process
