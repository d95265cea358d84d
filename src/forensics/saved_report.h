// A stack report as the user gets it: a few lines for the console, and the
// full text and JSON saved in the run's log folder.
#pragma once

#include <string>
#include <vector>

#include "forensics/stack_report.h"
#include "forensics/stack_sample.h"

namespace dlaunch::forensics {

struct SavedReport {
  StackReport report;
  std::string summary;               // "rank 2 on node1 differs"
  std::vector<std::string> lines;    // the console's short form, the files' paths last
  std::string text_path;             // "" when not saved
  std::string json_path;
};

// Merges WORKERS and, with a FOLDER, writes FOLDER/stacks/STEM.txt and
// .json (a report that cannot be written is said in the lines, never
// thrown: the report must not stop the teardown it comes before).
SavedReport save_report(std::vector<WorkerStacks> workers, const std::string& headline,
                        const std::string& folder, const std::string& stem);

}  // namespace dlaunch::forensics
