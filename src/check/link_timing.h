// How the pre-start gate times one link between two ranks of its group:
// each end's message in turn, acknowledged by a byte, a few times.
#pragma once

#include <cstdint>
#include <vector>

#include "collective/communicator.h"

namespace dlaunch::check {

struct LinkTiming {
  // Each direction is timed at most this often and the best is kept: one
  // transfer of a short message is at the mercy of a scheduler's hiccup.
  int transfers = 2;
  // A transfer that took this long is not repeated: TCP's slow start and a
  // hiccup are lost in it, and on a slow link (the one the gate looks for)
  // a repeat would double what that link costs each of its rounds.
  double long_enough_s = 0.1;
};

struct LinkFigure {
  double gbps = 0;     // the best of this end's sends
  int transfers = 0;   // how many times each direction was timed
};

// Times the link between this rank and PEER, which calls it at the same time
// with the same PAYLOAD size and TIMING: a one-byte ping-pong so that both
// ends are ready, then the lower rank's PAYLOAD acknowledged by a byte, then
// the higher rank's, up to TIMING.transfers times. The lower rank alone
// decides whether another transfer follows (its last acknowledgement says
// so), so both ends always agree. Throws what the communicator throws.
LinkFigure measure_link(collective::Communicator& communicator, std::vector<char>& payload, int peer,
                        const LinkTiming& timing = {});

// Gigabits per second for BYTES moved in SECONDS (0 when SECONDS is not positive).
double gigabits_per_second(std::uint64_t bytes, double seconds);

}  // namespace dlaunch::check
