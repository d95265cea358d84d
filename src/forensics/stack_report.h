// Where every rank is: the ranks grouped by identical stacks, in the
// manner of LLNL's STAT, outliers (the smallest groups) first.
//
// Pure: it takes what the capture found on every node and makes the
// report's values and its text and JSON forms, so the merging is
// unit-tested without a process.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "forensics/stack_sample.h"

namespace dlaunch::forensics {

// One frame of a rank's key stack: the main thread's Python frames, or its
// native frames for a program without Python frames. A run of the same
// frame (recursion) is one step with a count.
struct PathStep {
  std::string name;  // "load_batch", "app::read_all()", "?? (libc.so.6)"
  int repeats = 1;
  bool operator==(const PathStep&) const = default;
};

struct StackGroup {
  std::vector<int> ranks;           // ascending
  std::vector<std::string> hosts;   // distinct, in the order of their first rank
  std::vector<PathStep> path;       // outermost first; empty: nothing was captured
  bool python = false;              // the path is Python frames
};

struct StackReport {
  std::vector<StackGroup> groups;     // smallest first; equal sizes by lowest rank
  std::vector<WorkerStacks> workers;  // by rank
};

// A path longer than this shows its first and last frames around "...".
inline constexpr std::size_t kShortPathSteps = 8;

StackReport merge_stacks(std::vector<WorkerStacks> workers);

// "0-1,3-11" for {0,1,3,4,...,11}.
std::string compress_ranks(const std::vector<int>& ranks);

// "<module> > train > load_batch", at most MAX_STEPS steps ("... >" between).
std::string path_text(const std::vector<PathStep>& path, std::size_t max_steps = kShortPathSteps);

// "ranks 0-1,3 (3) on node1: <module> > train > all_reduce".
std::string group_line(const StackGroup& group);

// "rank 2 on node1 differs", "ranks 2,5 on node1,node2 differ", or "all 4
// ranks are in the same place".
std::string outlier_summary(const StackReport& report);

// The console's form: a header and one line per group.
std::vector<std::string> short_report(const StackReport& report);

// The file's form: the groups, the merged tree of every rank's key stack,
// then every rank's threads, Python and native, in full.
std::string full_report_text(const StackReport& report, const std::string& headline);
nlohmann::json report_json(const StackReport& report, const std::string& headline);

}  // namespace dlaunch::forensics
