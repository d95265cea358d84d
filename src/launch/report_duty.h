// Which launcher tells the user what, so that a job's log (Slurm gathers
// every node's stderr into one file) shows the failure summary, each
// notice and each restart once, not once per node.
//
// The cases, each thought through:
//  1. One node alone: it is the job, and says everything, as before.
//  2. A verdict from node 0's service, on the launcher with node rank 0
//     (the host of the service: it holds node rank 0 in every round, also
//     after a take-over): it speaks for the job: the whole summary, the
//     timeline, the restart lines, the notices.
//  3. The same verdict on any other launcher (a training node, a spare):
//     node 0 says it all, so it stays silent, unless it knows something
//     node 0's summary cannot say. The verdict names only the job's first
//     failure: a worker of this node that failed on its own account (at
//     the same time, or before the Stop reached it) gets one line here.
//  4. A verdict this launcher made alone: it lost node 0 (closed, silent,
//     malformed), or was told to stop while waiting for the verdict. Node
//     0 may be gone, and nobody else speaks for this node, so it prints its
//     own whole summary of what it saw. When node 0 died, each survivor
//     says so (a job never ends in silence); in a network cut both sides
//     speak, each of its own side.
//  5. Before any World (the configuration's notices, such as a batch step
//     running one launcher): slot 0, the launcher that hosts the service.
//  Failures before the World (a rendezvous timeout, a refusal) are each
//  launcher's own error as it exits, not a summary: each names what it met.
// Pure: the launcher asks, and prints what comes back.
#pragma once

#include <optional>
#include <string>

#include "wire/world.h"

namespace dlaunch::launch {

// Whether this launcher speaks for the job at the end of a round: says the
// summary, the timeline, a restart (cases 1, 2 and 4). LAUNCHERS: the job's
// launchers; NODE_RANK: this launcher's in the round that ended (nullopt:
// it stood by); VERDICT: the round's.
bool speaks_for_job(int launchers, std::optional<int> node_rank, const rendezvous::Verdict& verdict);

// Whether this launcher says the notices of a round's workers (the
// OMP_NUM_THREADS note): node rank 0, or one node alone. Every node derives
// them from the same settings, so node 0's say it for all.
bool says_notices(int launchers, std::optional<int> node_rank);

// Case 3's one line: when this node's own first failure (OWN) is not the
// one VERDICT names, a line that names it; nullopt when there is nothing
// node 0 does not say.
std::optional<std::string> own_failure_line(const rendezvous::Verdict& verdict,
                                            const rendezvous::NodeOutcome& own, int node_rank);

}  // namespace dlaunch::launch
