// What a launcher says while the rendezvous waits, so a node that never
// comes is seen within seconds instead of at the end of --rdzv-timeout.
//
// Node 0's service names the nodes still missing (and their hosts when
// Slurm's node list says where they should be); a launcher that cannot
// reach node 0 names the address and what it met there. Lines come every
// few seconds at first and more rarely as the wait goes on, so a long wait
// stays short in the log. Pure: the service and the dialer pass in what
// they know, and print what comes out through the non-blocking console.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace dlaunch::rendezvous {

// When the next waiting line is due. Plain fields, so tests can make them
// short.
struct WaitingSchedule {
  std::chrono::milliseconds early_interval{5'000};   // while the wait is young
  std::chrono::milliseconds early_until{30'000};
  std::chrono::milliseconds middle_interval{10'000};
  std::chrono::milliseconds middle_until{120'000};
  std::chrono::milliseconds late_interval{30'000};   // from then on

  // How long after a line said at WAITED (since the wait began) the next
  // one is due. The lines land on round numbers: 5, 10, ... 30, 40, ... 120,
  // 150, ... s with the defaults.
  std::chrono::milliseconds interval_after(std::chrono::milliseconds waited) const;
};

// Node 0's view of a round that is still gathering.
struct GatheringNodes {
  // The slots that have not joined (node ranks when the job has no spares).
  std::vector<int> missing;
  // Where each slot's launcher is expected, by slot (Slurm's node list);
  // empty, or "" for a slot: unknown.
  std::vector<std::string> expected_hosts;
  int joined = 0;  // launchers that joined and may train
  int needed = 0;  // the training size
  bool spares = false;  // slots are not node ranks, and any NEEDED of them will do
  std::chrono::milliseconds waited{0};
  std::chrono::milliseconds timeout{0};
};

// "waiting for node rank(s) 1 at node2, 3 at node4 (2/4 joined, 12 s of
// 300 s)"; without hosts "waiting for node rank(s) 1, 3 (...)". At most a
// few nodes are named; the rest are counted, so a line stays one line on a
// thousand nodes.
std::string gathering_line(const GatheringNodes& gathering);

// A launcher's view while it cannot reach node 0's service.
struct ReachingService {
  std::string service = "node 0";  // whom it waits for ("the new rendezvous" after a take-over)
  std::string address;             // HOST:PORT as given
  std::string last_seen;           // what it met last ("connection refused"); empty: nothing yet
  std::chrono::milliseconds waited{0};
  std::chrono::milliseconds timeout{0};
};

// "waiting for node 0 at node1:29500 (12 s of 300 s): connection refused".
std::string reaching_line(const ReachingService& reaching);

}  // namespace dlaunch::rendezvous
