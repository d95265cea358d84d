// `dlaunch check --gate`: the pre-start gate one node runs before a job's
// first attempt. The launcher on each node starts one such process (RANK is
// the node's gate rank, WORLD_SIZE the nodes in the gate) and reads its last
// line of stdout; node 0's rendezvous service judges every node's line
// (rendezvous/gate_verdict) and benches the nodes that fail.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "check/check_options.h"
#include "collective/communicator.h"

namespace dlaunch::check {

struct GateLink {
  int peer = 0;
  double gbps = 0;  // gigabits per second, as this rank measured its sends to PEER
};

// One GPU as nvidia-smi reports it.
struct GpuReading {
  int index = 0;
  std::optional<std::int64_t> ecc_uncorrected;  // nullopt: "[N/A]" (no ECC)
  std::string retired_pending;                   // "Yes", "No" or what nvidia-smi says
  std::string throttle;                          // the active throttle reasons, a bit mask
};

struct GpuCheck {
  bool ran = false;     // nvidia-smi answered with readings
  std::vector<GpuReading> gpus;
  std::string problem;  // why this node's GPUs should not be used; empty when none
  std::string note;     // why the GPUs were not checked; empty when they were
};

// What one rank found, printed as its one JSON line.
struct GateLine {
  int rank = -1;
  std::string host;
  bool allreduce = false;         // the ranks' all-reduce came back right
  std::vector<GateLink> links;    // in the order measured
  std::string error;              // one line; empty when the gate passed here
  std::vector<int> suspects;      // the ranks the error blames, when it can
  GpuCheck gpu;
};

// The line, as one line of JSON without the newline:
//   {"gate":1,"rank":R,"host":H,"allreduce":B,"links":[{"peer":P,"gbps":X},...],"error":E,
//    ["suspects":[...],] "gpus":[{"index","ecc_uncorrected","retired_pending","throttle"},...]|null,
//    ["gpu_problem":...,] ["gpu_note":...]}
// Pure.
std::string gate_line_text(const GateLine& line);

// nvidia-smi's answer to the query gate_gpu_query() asks (CSV, no header),
// read: lines that do not have four fields are skipped; EXIT_CODE other
// than 0 or TIMED_OUT make a note instead of readings, and a timeout is a
// problem (a hung nvidia-smi is a sick GPU's usual sign). Pure.
GpuCheck read_nvidia_smi(const std::string& output, int exit_code, bool timed_out);

// The arguments after "nvidia-smi".
std::vector<std::string> gate_gpu_query();

// The ranks an error message of the group's forming blames: "rank(s) 2, 5
// did not arrive" names 2 and 5; the store of rank 0 lost or unreachable
// names 0; a store key waited for in vain names the rank that owed it.
// Only ranks below WORLD_SIZE; empty when none is named. Pure.
std::vector<int> suspects_in(const std::string& message, int world_size);

// The gate for IDENTITY's rank: connect, all-reduce the ranks and verify
// the sum, then the first rounds of a tournament (at most 8), one after
// another: a barrier, then each pair times its link (check/link_timing),
// with the GPUs checked meanwhile. Returns the line it found; does not throw.
GateLine run_gate_rank(const collective::WorkerIdentity& identity, const CheckOptions& options);

// The gate, for this process's rank (read from the environment): connect,
// all-reduce the ranks and verify the sum, then the first tournament rounds,
// one after another (a barrier, then each pair times its link), with
// the GPUs checked meanwhile. Prints exactly one line on stdout (its JSON
// line; diagnostics go to stderr) and returns 0 when it passed here, 1
// otherwise: it does not throw.
int run_gate(const CheckOptions& options);

}  // namespace dlaunch::check
