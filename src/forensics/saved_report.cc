#include "forensics/saved_report.h"

#include <filesystem>
#include <fmt/format.h>

#include "util/atomic_file.h"
#include "util/error.h"

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
    std::error_code error;
    std::filesystem::create_directories(folder + "/stacks", error);
    if (error) throw util::SystemError(fmt::format("cannot create {}/stacks: {}", folder, error.message()));
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
