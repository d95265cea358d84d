#include "check/tournament.h"

#include <algorithm>

namespace dlaunch::check {

int tournament_round_count(int n) {
  if (n < 2) return 0;
  return n % 2 == 0 ? n - 1 : n;
}

std::vector<std::vector<std::pair<int, int>>> tournament_rounds(int n, int most_rounds) {
  std::vector<std::vector<std::pair<int, int>>> rounds;
  if (n < 2) return rounds;
  // An odd N gets a phantom rank N; whoever meets it sits the round out.
  const int players = n % 2 == 0 ? n : n + 1;
  const int ring = players - 1;  // every rank but 0 turns around this circle
  const int count = std::clamp(most_rounds, 0, ring);
  rounds.reserve(static_cast<std::size_t>(count));
  for (int round = 0; round < count; ++round) {
    std::vector<std::pair<int, int>> pairs;
    pairs.reserve(static_cast<std::size_t>(players / 2));
    // Seat s (1..ring) holds rank 1 + (s - 1 + round) % ring; seat 0 holds
    // rank 0. Seat i meets seat players-1-i.
    auto seated = [&](int seat) { return seat == 0 ? 0 : 1 + (seat - 1 + round) % ring; };
    for (int seat = 0; seat < players / 2; ++seat) {
      int a = seated(seat);
      int b = seated(players - 1 - seat);
      if (a >= n || b >= n) continue;  // the phantom: a rest
      pairs.emplace_back(std::min(a, b), std::max(a, b));
    }
    rounds.push_back(std::move(pairs));
  }
  return rounds;
}

}  // namespace dlaunch::check
