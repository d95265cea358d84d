// Whether the job is hung, and which ranks fall behind: the rule node 0's
// service (or a single node's own coordinator) applies to the progress
// every node reports.
//
// The job is hung when no rank on any node has made progress for the hang
// timeout. Until the first step is reported (a program's start: imports,
// loading data, compiling), a longer start-up timeout may apply instead, so
// that a short steady-state hang timeout does not stop a slow start. A
// straggler is a rank whose step is behind the median of all
// reported steps by more than the straggler lag. Pure: times and reports
// come in, decisions go out.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "util/socket.h"
#include "wire/progress.h"
#include "wire/world.h"

namespace dlaunch::rendezvous {

struct HangSettings {
  std::chrono::milliseconds hang_timeout{0};  // 0: never hung
  // --startup-timeout: until any rank reports its first step, the job is
  // not hung before this long after the round's start (0: the hang
  // timeout alone). Never shorter than the hang timeout (launch_config).
  std::chrono::milliseconds startup_timeout{0};
  std::int64_t straggler_lag = 0;             // 0: stragglers are not looked for
};

// --hang-timeout, --straggler-lag, and where stack reports go.
struct ForensicsSettings {
  HangSettings hang;
  std::string report_folder;  // the run's log folder: reports go to its stacks/ ("": not saved)
  std::chrono::milliseconds capture_timeout{5'000};  // per tool and worker
  std::function<void(const std::string&)> log;  // a line for the console; null: stderr
};

// How often stragglers are looked for while the workers run.
inline constexpr std::chrono::seconds kStragglerCheckInterval{5};

class HangWatch {
 public:
  // NODES: the node ranks of this round, each counted as making progress at START.
  HangWatch(HangSettings settings, int nodes, util::Clock::time_point start);

  // Node NODE_RANK (on HOST) made progress last at LAST_PROGRESS; its
  // workers are at STEPS.
  void update(int node_rank, const std::string& host, util::Clock::time_point last_progress,
              std::vector<RankStep> steps);

  // When the job will count as hung if nothing moves; nullopt: never (no
  // hang timeout, or the hang was already declared).
  std::optional<util::Clock::time_point> due() const;
  bool hung(util::Clock::time_point now) const;
  // Declares the hang once: due() is nullopt from then on. Returns the
  // headline, "no progress for 10 s on any rank".
  std::string declare(util::Clock::time_point now);

  // A line naming the stragglers when they changed since the last call
  // ("stragglers: rank 5 on node2 at step 880, 120 behind the median 1000";
  // "no stragglers now" once they caught up); nullopt when unchanged.
  std::optional<std::string> straggler_news();

 private:
  struct Node {
    std::string host;
    util::Clock::time_point last_progress;
    std::vector<RankStep> steps;
  };
  // The time the last progress anywhere allows; when no step came yet, the
  // start-up timeout's end too, whichever is later.
  util::Clock::time_point latest_progress() const;
  bool starting() const;

  HangSettings settings_;
  util::Clock::time_point start_;
  bool first_step_seen_ = false;
  std::map<int, Node> nodes_;
  bool declared_ = false;
  std::vector<int> last_stragglers_;
};

// The job's failure for a hang: "hang: HEADLINE; SUMMARY (stacks in
// REPORT_PATH)", with the hang's exit code.
Failure hang_failure(const std::string& headline, const std::string& summary,
                     const std::string& report_path);

}  // namespace dlaunch::rendezvous
