// Where a run's per-rank log files are (`dlaunch logs`): dlaunch run files
// them as LOGS/attempt_K/rankR/{stdout,stderr}.log, with LOGS the
// submission's (or a task's) logs/, or logs/requeue_N/ after Slurm started
// the job again; attempt_K/node<N>.json says which ranks node N ran.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace dlaunch::jobs {

struct RankFiles {
  int rank = 0;
  std::string stdout_path;  // "" when not filed
  std::string stderr_path;
};

struct AttemptLogs {
  std::string folder;  // .../attempt_K
  int attempt = 0;     // K
  int attempts = 0;    // how many the run has
  std::vector<RankFiles> ranks;  // by rank
};

struct LogChoice {
  std::optional<std::vector<int>> ranks;  // --rank
  std::optional<int> node;                // --node: the ranks node<N>.json names
  std::optional<int> attempt;             // --attempt; default: the last
};

// The run's logs under FOLDER (a submission's or a task's), as CHOICE
// narrows them. Throws InputError naming what is missing: no logs yet, no
// such attempt (and which exist), no such rank or node (and which exist).
AttemptLogs find_rank_logs(const std::string& folder, const LogChoice& choice);

// "0,2-3" as {0, 2, 3}. Throws InputError naming TEXT.
std::vector<int> parse_rank_list(const std::string& text);

}  // namespace dlaunch::jobs
