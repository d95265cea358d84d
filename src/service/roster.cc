#include "service/roster.h"

#include <algorithm>

namespace dlaunch::rendezvous {
namespace {

bool contains(const std::vector<int>& slots, int slot) {
  return std::find(slots.begin(), slots.end(), slot) != slots.end();
}

}  // namespace

Roster choose_roster(const std::vector<int>& joined, const std::set<int>& benched,
                     const std::vector<int>& previous, int service_slot, int nnodes) {
  std::vector<int> eligible;
  for (int slot : joined) {
    if (benched.count(slot) == 0 && !contains(eligible, slot)) eligible.push_back(slot);
  }
  std::sort(eligible.begin(), eligible.end());
  std::size_t size = std::min(eligible.size(), static_cast<std::size_t>(std::max(nnodes, 0)));
  std::vector<int> ranks(size, -1);
  std::vector<int> waiting;  // eligible slots without a place yet, in the order they get one
  if (size > 0 && contains(eligible, service_slot)) ranks[0] = service_slot;
  for (std::size_t rank = 0; rank < previous.size(); ++rank) {
    int slot = previous[rank];
    if (slot == service_slot || !contains(eligible, slot)) continue;
    if (rank < size && ranks[rank] < 0) ranks[rank] = slot;
    else waiting.push_back(slot);
  }
  for (int slot : eligible) {
    if (!contains(ranks, slot) && !contains(waiting, slot)) waiting.push_back(slot);
  }
  auto next = waiting.begin();
  for (int& slot : ranks) {
    if (slot < 0) slot = *next++;
  }
  Roster roster;
  roster.node_slots = std::move(ranks);
  for (int slot : eligible) {
    if (!contains(roster.node_slots, slot)) roster.spare_slots.push_back(slot);
  }
  return roster;
}

}  // namespace dlaunch::rendezvous
