// The hosts dlaunch benched, remembered across a Slurm requeue.
//
// Why: dlaunch benches a node for a spare (the pre-start gate, a failing
// --health-check, --node-fail-limit), but Slurm sees nothing wrong with it.
// When node 0 requeues the job after a preemption, Slurm may give the
// requeued job the same bad host again. The record (a small JSON file in
// the submission folder, --bench-record) keeps, per host, when and why it
// was benched and until when the job keeps it out (its ExcNodeList). The
// cooldown doubles each further time the same host is benched, capped at a
// day, as horovodrun's blacklist does: a host that fails once may have had
// a passing fault, one that fails again and again is likely broken.
//
// Everything here is pure: the caller reads the job's ExcNodeList, runs
// scontrol and reads and writes the file (launch/requeue_exclusion.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dlaunch::slurm {

// The longest a host stays excluded, however often it was benched.
inline constexpr std::int64_t kMaxBenchCooldown = 24 * 3600;
// --bench-cooldown's default: the first time a host is benched.
inline constexpr std::int64_t kDefaultBenchCooldown = 30 * 60;
// A record file larger than this is refused: the file is dlaunch's own and
// holds one short entry per host.
inline constexpr std::size_t kMaxBenchRecordBytes = 1 << 20;
// More hosts than any cluster a job spans; a record with more is refused.
inline constexpr std::size_t kMaxBenchRecordHosts = 10000;

// One host of the record. Times are Unix seconds.
struct BenchEntry {
  std::string host;                 // the Slurm node name, as ExcNodeList takes it
  std::int64_t last_benched = 0;    // when dlaunch benched it last
  int times = 0;                    // how many times it was benched (the cooldown doubles with each)
  std::string why;                  // one line: the last benching's reason
  std::int64_t excluded_until = 0;  // the job keeps it out until then
  // dlaunch itself put it in the job's ExcNodeList (the user had not): it
  // is dlaunch's to take out again once the cooldown is over.
  bool added_by_dlaunch = false;
};

struct BenchRecord {
  std::vector<BenchEntry> hosts;  // at most one per host
};

// A host this run benched, and why (one line).
struct BenchedHost {
  std::string host;
  std::string why;
};

// The cooldown for a host benched the TIMES-th time: BASE, doubled for
// each time before, capped at kMaxBenchCooldown.
std::int64_t bench_cooldown(std::int64_t base, int times);

// Adds this run's BENCHED hosts to RECORD at NOW: a new host is benched
// once, a known one once more (its cooldown doubles from BASE). An entry
// whose cooldown ended more than kMaxBenchCooldown ago is forgotten first,
// so a host that stayed fine a whole day starts over at BASE.
void merge_benched(BenchRecord& record, const std::vector<BenchedHost>& benched, std::int64_t now,
                   std::int64_t base);

// The entries still in cooldown at NOW, in the record's order.
std::vector<BenchEntry> in_cooldown(const BenchRecord& record, std::int64_t now);

// The job's new exclusion list, worked out from its current one.
struct Exclusion {
  std::vector<std::string> hosts;     // the whole new ExcNodeList (expanded)
  std::vector<std::string> added;     // hosts dlaunch adds now
  std::vector<std::string> released;  // hosts dlaunch had added whose cooldown is over
  bool changed() const { return !added.empty() || !released.empty(); }
};

// What the job's ExcNodeList (CURRENT, expanded) becomes at NOW: the hosts
// in cooldown join it; the ones dlaunch added earlier whose cooldown is
// over leave it; everything else in it is the user's and stays, also a
// host the user had excluded that dlaunch benched too (it stays theirs).
Exclusion plan_exclusion(const BenchRecord& record, const std::vector<std::string>& current, std::int64_t now);

// RECORD once EXCLUSION is the job's: added_by_dlaunch set on the hosts
// dlaunch added and cleared on those it released.
void note_exclusion(BenchRecord& record, const Exclusion& exclusion);

// The record as the JSON file holds it.
std::string bench_record_json(const BenchRecord& record);

// The record in TEXT, the file at PATH's contents. Throws InputError, one
// line naming PATH, when TEXT is not such a record: not JSON, wrong types,
// a host name that is not one, too many hosts.
BenchRecord parse_bench_record(std::string_view text, const std::string& path);

// Whether TEXT can be a Slurm node name in an exclusion list: letters,
// digits, '.', '-' and '_' (no ',' or '[' that would name other hosts).
bool is_node_name(std::string_view text);

}  // namespace dlaunch::slurm
