// Node 0's requeue after a preemption, keeping the hosts dlaunch benched
// out of the requeued job (slurm/bench_record.h says why and for how long).
//
// Order, as Slurm 22.05 allows it: `scontrol requeue` first, then `scontrol
// update ExcNodeList=` (refused while the job runs, taken once it is
// pending again), then the record file. Only a failed requeue is an error:
// a record or exclusion that cannot be read or set costs one line and the
// requeue goes on, since losing the job's place in the queue is worse than
// a bad host.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "slurm/bench_record.h"
#include "wire/world.h"

namespace dlaunch::launch {

// Why the launcher in SLOT, on HOST, was benched, in one line, from node
// 0's TIMELINE (the service's events: "gate: H (slot N) benched: WHY",
// "health check: H (slot N) benched: WHY", "node R (H) failed K rounds in a
// row (...)"); its last such event counts. A generic reason when none says.
std::string bench_reason(const std::vector<std::string>& timeline, int slot, const std::string& host);

// The hosts WORLD benched, as Slurm names them: SLOT_HOSTS holds each
// slot's host (LaunchConfig's topology.expected_hosts); a slot it lacks is
// left out.
std::vector<slurm::BenchedHost> benched_hosts(const rendezvous::World& world,
                                              const std::vector<std::string>& timeline,
                                              const std::vector<std::string>& slot_hosts);

// "node-b (benched: WHY; excluded until 12:30, cooldown 30 min)" (the
// local time; with the date when not today, relative to NOW).
std::string describe_exclusion(const slurm::BenchEntry& entry, std::int64_t now);

struct RequeueRequest {
  std::string job_id;
  std::optional<std::string> record_path;  // --bench-record; nullopt: a plain requeue
  std::int64_t cooldown_s = slurm::kDefaultBenchCooldown;
  std::vector<slurm::BenchedHost> benched;  // this run's
  std::int64_t now = 0;                     // Unix seconds
};

// Requeues the job, excluding the hosts in cooldown as above. SAY gets
// each line for the user. Throws SystemError only when the requeue failed.
void requeue_excluding_benched(const RequeueRequest& request, const std::function<void(const std::string&)>& say);

}  // namespace dlaunch::launch
