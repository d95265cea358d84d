// `dlaunch check --bench`: an all-reduce sweep in the style of nccl-tests.
#pragma once

#include <cstdint>
#include <vector>

#include "check/check_options.h"
#include "collective/communicator.h"

namespace dlaunch::check {

struct SweepRow {
  std::uint64_t bytes = 0;
  std::uint64_t count = 0;  // float32 elements
  double time_us = 0;       // mean per all-reduce, on rank 0
  double algbw = 0;         // GB/s: bytes / time
  double busbw = 0;         // GB/s: algbw * 2(n-1)/n, the ring's traffic per link
  std::int64_t wrong = 0;   // elements wrong after a verified run, over all ranks
};

// Message sizes from MIN to MAX bytes, doubling, each a whole number of floats.
std::vector<std::uint64_t> sweep_sizes(std::uint64_t min_bytes, std::uint64_t max_bytes);

// algbw * 2(n-1)/n.
double bus_bandwidth(double algbw, int ranks);

// Runs the sweep on every rank; rank 0 prints the table (or JSON). Returns
// 0 when no element was wrong, else 1.
int run_bandwidth_sweep(collective::Communicator& communicator, const CheckOptions& options,
                        int nodes);

}  // namespace dlaunch::check
