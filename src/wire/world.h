// What every node agreed on at rendezvous, and how a node's part ended.
// Plain values: the rendezvous sends them, the supervisor and report read them.
#pragma once

#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace dlaunch::rendezvous {

// --min-nodes not given (0) means every node: losing one without a spare
// ends the job.
inline int effective_min_nodes(int min_nodes, int nnodes) { return min_nodes > 0 ? min_nodes : nnodes; }

struct World {
  int round = 0;                      // restart count, TORCHELASTIC_RESTART_COUNT
  std::vector<int> nproc_per_node;    // indexed by node rank; nodes may differ
  // Which launcher holds each node rank this round. A launcher's slot is
  // its place in the job (--node-rank, SLURM_NODEID: 0 to nnodes + spare
  // nodes - 1); its node rank is given anew each round, so a spare can take
  // a lost node's place.
  std::vector<int> node_slots;
  std::vector<int> spare_slots;    // launchers on standby this round: no workers, heartbeats only
  std::vector<int> benched_slots;  // launchers kept out for failing --node-fail-limit rounds in a row
  // Each launcher's address as node 0 reached it, indexed by slot ("" when
  // unknown): where the rendezvous moves if node 0 is lost.
  std::vector<std::string> addresses;
  // Each launcher's network interface as the rendezvous chose it by
  // reachability, and that interface's address, indexed by slot ("" when
  // not chosen): the workers' GLOO_SOCKET_IFNAME and NCCL_SOCKET_IFNAME.
  std::vector<std::string> ifnames;
  std::vector<std::string> ifaddresses;
  std::string worker_master_addr;     // MASTER_ADDR for the workers
  int worker_master_port = 0;         // MASTER_PORT, chosen by node 0
  std::string run_id;
  int heartbeat_timeout_ms = 0;       // node 0's --heartbeat-timeout, adopted by every node
  // Random, chosen by round 0's service and kept by a take-over: tells this
  // job's records in the log folder from an earlier run's in the same folder
  // (a fenced launcher reads them, launch/run_record.h).
  std::string incarnation;

  int nnodes() const { return static_cast<int>(nproc_per_node.size()); }
  int world_size() const;
  // Global rank of local rank 0 on NODE_RANK: the prefix sum of the nodes before it.
  int rank_offset(int node_rank) const;
  // The node rank of the launcher in SLOT this round; nullopt: it stands by.
  // A World without slots (one node alone, a test's) keeps slot = node rank.
  std::optional<int> node_rank_of(int slot) const;
};

// The first worker failure of a node (or of the job), as reported to users.
struct Failure {
  int global_rank = -1;  // -1: not a worker (the launcher itself, a lost node)
  int local_rank = -1;
  int node_rank = -1;
  std::string host;
  pid_t pid = 0;
  int exit_code = 1;     // 128+N when killed by signal N
  int signal = 0;        // 0 when the worker exited normally
  std::string time;      // ISO 8601, local time of the failure
  std::string log_file;  // empty when the worker had no log file
  std::string error_message;  // from the worker's TORCHELASTIC_ERROR_FILE, if it wrote one
  std::vector<std::string> last_lines;
  std::string description;  // for failures that are not a worker exit ("launcher lost")
};

// How the workers of one node ended in one round.
struct NodeOutcome {
  bool succeeded = false;
  std::optional<Failure> failure;  // this node's root failure (doctor/diagnosis.h choose_root)
  int stop_signal = 0;             // the launcher was told to stop by this signal
  bool preempted = false;          // the preemption signal arrived during the round
  // Workers of this node that failed too, as a consequence of that one
  // or of another node's (stopped by dlaunch, or lost a peer). On the wire
  // since protocol 11.
  int consequences = 0;
  // The highest step a worker of this node reported on DLAUNCH_PROGRESS_FD
  // this round (none: no step), for the repeated-failure rule's "no
  // further" across nodes. On the wire since protocol 12.
  std::optional<std::int64_t> top_step;
};

// The job-wide decision every launcher acts on, so all exit alike.
struct Verdict {
  enum class Kind { kSucceeded, kFailed, kRestart };
  Kind kind = Kind::kSucceeded;
  int exit_code = 0;
  std::optional<Failure> failure;  // the job's root failure: its first that is not a cascade
  // Why a failure was not restarted though restarts were left ("a node was
  // lost and no spare is left"); empty otherwise.
  std::string not_restarted;
  // The job's life so far, one line per event (a node lost, a spare taking
  // its place, a node benched, how long the job was down): node 0's
  // service keeps it and every verdict carries it, for the summary.
  std::vector<std::string> timeline;
  // Node 0's service ended the job on its side of a network split because
  // it kept too few launchers: the job may go on on the other side, so the
  // launchers here write none of the job's records (its exit code, its
  // result). On the wire.
  bool stepped_aside = false;
  // This launcher made the verdict alone, without node 0's service: it lost
  // node 0, or was told to stop while waiting for the verdict. Nobody else
  // then speaks for this node (launch/report_duty.h). Never on the wire.
  bool decided_here = false;
  // The failures that followed the root failure as a consequence ("3
  // ranks failed as a consequence"), every node's. On the wire since
  // protocol 11.
  int consequences = 0;
};

// One line: "rank 3 (local rank 1) on node1 exited with code 3", or the
// description of a failure that is not a worker's.
std::string describe_failure(const Failure& failure);

}  // namespace dlaunch::rendezvous
