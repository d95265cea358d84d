// What node 0's service tells of the job's recoveries: the timeline every
// Verdict carries (benched nodes, losses, replacements, the first event
// kept and then the latest), and for each round that replaced a node the
// line that says who took whose place and how long the job was down, from
// the last sign of life of what failed to every worker running again.
//
// The service's loop says when things happen; this part keeps the times
// and words, so the account is tested without a service.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "service/roster.h"
#include "util/socket.h"

namespace dlaunch::rendezvous {

// What a new round's roster changed against BEFORE (last round's node
// slots), each change in words ("host3 (spare) takes node rank 1"), with
// HOSTS naming each slot. MIN_NODES and NNODES: for a job that shrank.
std::vector<std::string> roster_changes(const Roster& roster, const std::vector<int>& before,
                                        const std::vector<std::string>& hosts, int nnodes, int min_nodes);

class RecoveryLog {
 public:
  // TIMELINE: the events a lost node 0 had recorded (a take-over's).
  explicit RecoveryLog(std::vector<std::string> timeline = {});

  // EVENT, stamped with the local time; past a bound, the oldest but the
  // first are dropped.
  void add(const std::string& event);
  const std::vector<std::string>& timeline() const { return timeline_; }

  // What failed last showed life at LAST_ALIVE (the earliest such time of
  // the round counts) and was noticed at NOTICED.
  void fault(util::Clock::time_point last_alive);
  void failure_noticed(util::Clock::time_point noticed);

  // Round ROUND (of MAX_RESTARTS restarts) trains with CHANGES made to
  // the last one's nodes: said once its workers all run.
  void replaced(int round, int max_restarts, const std::vector<std::string>& changes);

  // Every worker of the round runs since ALL_RUNNING (nullopt: the round
  // ended before they all did): the replacement line, with the down time,
  // is added to the timeline and returned for the log; nothing when the
  // round replaced nobody.
  std::optional<std::string> round_running(std::optional<util::Clock::time_point> all_running);

 private:
  std::vector<std::string> timeline_;
  std::optional<util::Clock::time_point> failed_at_;
  std::optional<util::Clock::time_point> fault_at_;
  std::string replacement_line_;
};

}  // namespace dlaunch::rendezvous
