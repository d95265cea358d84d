// `dlaunch stacks` as a client of a running job's rendezvous: it proves
// the job's token like a launcher, asks node 0 for every worker's stack,
// and takes each node's answer. The job is not stopped or slowed beyond
// the capture itself, and the observer never counts as one of its nodes.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "forensics/stack_sample.h"
#include "process/signal_channel.h"

namespace dlaunch::rendezvous {

struct ObserveSettings {
  std::string master_addr;
  int port = 0;
  std::optional<std::string> token;  // the job's rendezvous secret; nullopt: none
  std::string run_id;                // "" accepts whatever job answers
  std::chrono::milliseconds timeout{60'000};  // to connect, capture and receive
};

struct Observed {
  std::string headline;  // node 0's: what was captured, or why nothing was
  std::vector<forensics::WorkerStacks> workers;
};

// Throws SystemError naming the address when no rendezvous answers in time
// or node 0 refuses (a wrong token, another job), InputError when node 0
// requires a token and none was given, Interrupted on Ctrl-C.
Observed observe_stacks(const ObserveSettings& settings, process::SignalChannel& signals);

}  // namespace dlaunch::rendezvous
