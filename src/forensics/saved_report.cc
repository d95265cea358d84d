#include "forensics/saved_report.h"

#include <fmt/format.h>

#include "util/atomic_file.h"
#include "util/error.h"
#include "util/trusted_folder.h"

namespace dlaunch::forensics {

SavedReport save_report(std::vector<WorkerStacks> workers, const std::string& headline,
                        const std::string& folder, const std::string& stem) {
  SavedReport saved;
  saved.report = merge_stacks(std::move(workers));
  saved.summary = outlier_summary(saved.report);
  saved.lines = short_report(saved.report);
  if (folder.empty()) return saved;
  std::string base = folder + "/stacks/" + stem;
  try {
    // A new folder of ours, or one that is ours already: never a planted link.
    util::make_own_folders(folder + "/stacks", 1);
    util::write_file_atomically(base + ".txt", full_report_text(saved.report, headline));
    util::write_file_atomically(base + ".json", report_json(saved.report, headline).dump(
                                                    2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    saved.text_path = base + ".txt";
    saved.json_path = base + ".json";
    saved.lines.push_back(fmt::format("full report: {} (and .json)", saved.text_path));
  } catch (const util::SystemError& error) {
    saved.lines.push_back(fmt::format("the full report could not be saved: {}", error.what()));
  }
  return saved;
}

}  // namespace dlaunch::forensics
