// Who trains in a round, with which node rank, and who stands by.
//
// A job may have more launchers than training nodes (--spare-nodes): each
// round node 0's service gives the node ranks anew from the launchers that
// joined. The rule is a pure function so that it is tested on its own and
// every reader of the code sees it in one place.
#pragma once

#include <set>
#include <vector>

namespace dlaunch::rendezvous {

struct Roster {
  std::vector<int> node_slots;   // the slot of each node rank, 0..size-1
  std::vector<int> spare_slots;  // the rest, in slot order
};

// Chooses min(NNODES, eligible) training nodes among JOINED (slots, any
// order), leaving out BENCHED. SERVICE_SLOT, whose host serves the
// rendezvous and the workers' MASTER_ADDR, gets node rank 0 when it joined.
// A node of PREVIOUS (last round's node_slots; empty in round 0) keeps its
// node rank while that rank still exists, so a replacement renumbers
// nobody; the places left go to the remaining nodes of PREVIOUS, then to
// spares, lowest slot first.
Roster choose_roster(const std::vector<int>& joined, const std::set<int>& benched,
                     const std::vector<int>& previous, int service_slot, int nnodes);

}  // namespace dlaunch::rendezvous
