// This node's part of the pre-start gate: dlaunch-check --gate as one child
// process with a gate rank's environment, read without blocking so that the
// launcher keeps its heartbeat with node 0 while the check runs.
//
// The check is started as a worker is, by process::start_worker, not by a
// fork of its own: so it gets what a worker gets, its own process group,
// SIGKILL when the launcher dies, no signal blocked and every signal's
// default action, stdin from /dev/null, every descriptor the launcher holds
// closed on exec except the store secret's pipe (handed on by number in
// DLAUNCH_STORE_SECRET_FD), and the exec-status pipe that tells a program
// that could not be executed from one that failed.
//
// Both its pipes are read. Its stdout carries the check's JSON line (the
// last 64 KiB are kept). Its stderr is drained as it comes, so a check that
// writes much there never waits on it, and only its last few KiB are kept
// (process::OutputTail): their last lines go into the error when the check
// fails. A read takes a bounded amount from each pipe, so a check that
// writes without pause cannot hold the launcher's loop.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <sys/types.h>

#include "process/stream_relay.h"
#include "util/fd.h"
#include "wire/protocol.h"

namespace dlaunch::rendezvous {

class GateProcess {
 public:
  // Starts dlaunch-check (beside this executable) as gate rank
  // MESSAGE.gate_rank, with RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT and
  // GLOO_SOCKET_IFNAME (the interface chosen for this host, unless the user
  // set one). Throws SystemError naming the program when it is missing, when
  // it cannot be started, or when its exec failed (with the errno's text;
  // that child is reaped).
  explicit GateProcess(const GateMessage& message);
  // Kills the check (its whole process group) if it still runs, and reaps it.
  ~GateProcess();
  GateProcess(const GateProcess&) = delete;
  GateProcess& operator=(const GateProcess&) = delete;

  // The read ends of its stdout and stderr, to poll; -1 for one that ended
  // (poll skips it).
  std::span<const int> fds() const { return polled_; }
  // Reads what its pipes hold now, a bounded amount of each, never waiting.
  // True once both have ended.
  bool read_some();
  // Once its pipes ended, or at the deadline (TIMED_OUT: it is killed):
  // reaps it and says how it ended, with its last line of stdout and, when
  // it failed, the last lines of its stderr in the error.
  GateReportMessage finish(bool timed_out);

 private:
  // Reads up to BUDGET bytes of pipe STREAM (0: stdout, 1: stderr); closes
  // it at its end or on a read error.
  void read_pipe(int stream, std::size_t budget);
  // Kills its process group and reaps it.
  void stop();

  pid_t pid_ = -1;
  util::Fd pipes_[2];         // stdout, stderr
  int polled_[2] = {-1, -1};  // their numbers while open
  std::string tail_;          // stdout's last 64 KiB
  process::OutputTail errors_;
  std::uint32_t timeout_ms_ = 0;
};

}  // namespace dlaunch::rendezvous
