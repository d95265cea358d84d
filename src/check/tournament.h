// Who measures which link when: a round-robin tournament over the ranks,
// so that every pair meets once and each round's pairs run side by side.
#pragma once

#include <limits>
#include <utility>
#include <vector>

namespace dlaunch::check {

// The circle method: rank 0 stays put, the others rotate. N-1 rounds for
// an even N, N rounds for an odd N (each round one rank sits out). Every
// unordered pair appears in exactly one round, as (lower, higher), and no
// rank appears twice in a round. Empty for N < 2. With MOST_ROUNDS, only
// the first MOST_ROUNDS rounds: each rank then meets that many others (one
// fewer when it sits a round out). Pure.
std::vector<std::vector<std::pair<int, int>>> tournament_rounds(int n,
                                                                int most_rounds = std::numeric_limits<int>::max());

// The number of rounds tournament_rounds(N) returns, without building them.
int tournament_round_count(int n);

}  // namespace dlaunch::check
