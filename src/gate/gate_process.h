// This node's part of the pre-start gate: dlaunch-check --gate as one child
// process with a gate rank's environment, read without blocking so that the
// launcher keeps its heartbeat with node 0 while the check runs.
#pragma once

#include <string>
#include <sys/types.h>

#include "util/fd.h"
#include "wire/protocol.h"

namespace dlaunch::rendezvous {

class GateProcess {
 public:
  // Starts dlaunch-check (beside this executable) as gate rank
  // MESSAGE.gate_rank, with RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT and
  // GLOO_SOCKET_IFNAME (the interface chosen for this host, unless the user
  // set one). Throws SystemError naming the program when it cannot start.
  explicit GateProcess(const GateMessage& message);
  // Kills the check (its whole process group) if it still runs, and reaps it.
  ~GateProcess();
  GateProcess(const GateProcess&) = delete;
  GateProcess& operator=(const GateProcess&) = delete;

  // The read end of its stdout, to poll.
  int fd() const { return output_.get(); }
  // Reads what its stdout holds (the last 64 KiB are kept). True at EOF.
  bool read_some();
  // Once its stdout ended, or at the deadline (TIMED_OUT: it is killed):
  // reaps it and says how it ended, with its last line of output.
  GateReportMessage finish(bool timed_out);

 private:
  pid_t pid_ = -1;
  util::Fd output_;
  std::string tail_;
  std::uint32_t timeout_ms_ = 0;
};

}  // namespace dlaunch::rendezvous
