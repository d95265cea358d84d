// What Slurm says about a job: the records of `scontrol show job -o`.
//
// Why hand-written: Slurm 22.05's scontrol has no stable machine format
// here (its --json needs an openapi plugin Debian's build may lack), and
// libslurm's job API is no stable public -dev library. The one-line form
// (-o) gives one record per job or array task, as NAME=VALUE fields
// separated by spaces.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dlaunch::slurm {

// One job (or array task, or a run of pending array tasks) as scontrol shows it.
class JobInfo {
 public:
  // VALUE of the field NAME ("JobState" gives "RUNNING"); "" when absent.
  std::string field(std::string_view name) const;
  bool has(std::string_view name) const;
  void add(std::string name, std::string value);

  const std::vector<std::pair<std::string, std::string>>& fields() const { return fields_; }

  // Conveniences over field():
  std::string job_id() const { return field("JobId"); }
  std::string state() const { return field("JobState"); }
  // "12_3" for an array task, "12_[4-7%2]" for pending ones, else the job id.
  std::string display_id() const;

 private:
  std::vector<std::pair<std::string, std::string>> fields_;
};

// Every record in OUTPUT (one per non-empty line). A field starts at a word
// shaped NAME=...; a word without '=' continues the value before it, since
// values such as Command= may hold spaces. Lines longer than kMaxRecordBytes
// are cut there, and at most kMaxRecords records are kept: the output comes
// from another program and must not grow without bound.
std::vector<JobInfo> parse_job_records(std::string_view output);

inline constexpr std::size_t kMaxRecordBytes = 64 * 1024;
inline constexpr std::size_t kMaxRecords = 100000;

// Slurm's "[DD-[HH:]]MM:SS"-style durations ("1-02:03:04", "05:06", "UNLIMITED")
// in seconds; nullopt for UNLIMITED, INVALID, Partition_Limit and anything unreadable.
std::optional<long long> parse_duration(std::string_view text);

// Seconds as Slurm writes them: "1-02:03:04", "02:03:04", "03:04".
std::string format_duration(long long seconds);

// What JobState's value (scontrol's, or sacct's State) says about the job.
// The one rule for `dlaunch status`, `jobs`, `cancel` and `submit --wait`.
// STATE's first word counts: sacct writes "CANCELLED by 1000".
//
// Final: COMPLETED, FAILED, CANCELLED, TIMEOUT, NODE_FAIL, PREEMPTED,
// BOOT_FAIL, DEADLINE, OUT_OF_MEMORY (the ends of Slurm's base states) and
// REVOKED (a federated job that another cluster runs: it never runs here).
// A state no Slurm release has shown before, or "", is not final: every
// state Slurm added since 14.03 (STAGE_OUT, SIGNALING, RESV_DEL_HOLD,
// REQUEUE_FED, ...) marks a job still on its way, while the ends have been
// the same since OUT_OF_MEMORY (17.11). Taking such a job for alive costs
// at most MinJobAge (300 s by default): then Slurm forgets the job, which
// both `status` and `submit --wait` take as its end. Taking it for ended
// would report a running job over and print its exit code as 0.
bool is_final_state(std::string_view state);

// Whether STATE waits in the queue, where Slurm's Reason says why: PENDING,
// CONFIGURING (its nodes boot), and the requeued and held ones (REQUEUED,
// REQUEUE_HOLD, REQUEUE_FED, SPECIAL_EXIT, RESV_DEL_HOLD), which start
// again once released. SPECIAL_EXIT is Slurm's PENDING with a flag: the job
// ended with an exit code the site chose and waits, held, for a user's
// `scontrol release`, so it is not final either.
bool is_queued_state(std::string_view state);

// The exit code behind ExitCode's "CODE:SIGNAL": 128+SIGNAL when killed.
// nullopt when TEXT is not of that form.
std::optional<int> parse_exit_code(std::string_view text);

// The exit code to report for a job that ended (INFO shows a final state):
// ExitCode's, but 1 when that is unreadable, and never 0 unless the job
// COMPLETED, since a job cancelled or timed out before its program exited
// shows 0:0.
int end_exit_code(const JobInfo& info);

}  // namespace dlaunch::slurm
