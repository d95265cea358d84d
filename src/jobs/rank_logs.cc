#include "jobs/rank_logs.h"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>

#include "jobs/submission_record.h"
#include "util/error.h"
#include "util/strings.h"

namespace dlaunch::jobs {
namespace {

namespace fs = std::filesystem;

constexpr int kMaxRank = 1 << 20;

std::string numbers_text(const std::vector<int>& numbers) {
  std::vector<std::string> parts;
  for (int number : numbers) parts.push_back(std::to_string(number));
  return parts.empty() ? "none" : util::join(parts, ", ");
}

std::vector<int> ranks_of_node(const std::string& attempt_folder, int node) {
  std::string path = fmt::format("{}/node{}.json", attempt_folder, node);
  auto record = read_json_file(path);
  if (!record || !record->contains("ranks") || !(*record)["ranks"].is_array())
    throw util::InputError(fmt::format("no record of node {} in {} (each node's dlaunch run writes "
                                       "node<N>.json there when its workers start)",
                                       node, attempt_folder));
  std::vector<int> ranks;
  for (const auto& rank : (*record)["ranks"])
    if (rank.is_number_integer()) ranks.push_back(rank.get<int>());
  return ranks;
}

std::string file_if_there(const std::string& path) {
  std::error_code error;
  return fs::is_regular_file(path, error) ? path : "";
}

}  // namespace

std::vector<int> parse_rank_list(const std::string& text) {
  std::vector<int> ranks;
  for (const auto& part : util::split(text, ',')) {
    auto dash = part.find('-');
    auto first = util::parse_int(part.substr(0, dash));
    auto last = dash == std::string::npos ? first : util::parse_int(part.substr(dash + 1));
    if (!first || !last || *first < 0 || *last < *first || *last >= kMaxRank)
      throw util::InputError(fmt::format("--rank '{}': expected ranks such as 0, 0,3 or 0-3 (from 0 to {})",
                                         text, kMaxRank - 1));
    for (auto rank = *first; rank <= *last; ++rank) ranks.push_back(static_cast<int>(rank));
  }
  return ranks;
}

AttemptLogs find_rank_logs(const std::string& folder, const LogChoice& choice) {
  const std::string run = last_run_folder(folder);
  auto attempts = numbered_folders(run, "attempt_");
  if (attempts.empty())
    throw util::InputError(fmt::format("no worker logs in {} yet: the job has not started its workers (or "
                                       "ran with --launch task, whose output is in the Slurm log only)",
                                       run));
  AttemptLogs logs;
  logs.attempts = static_cast<int>(attempts.size());
  logs.attempt = choice.attempt.value_or(attempts.back());
  if (std::find(attempts.begin(), attempts.end(), logs.attempt) == attempts.end())
    throw util::InputError(fmt::format("--attempt {}: no such attempt in {} (there: {})", logs.attempt, run,
                                       numbers_text(attempts)));
  logs.folder = fmt::format("{}/attempt_{}", run, logs.attempt);
  std::vector<int> present = numbered_folders(logs.folder, "rank");
  std::vector<int> wanted = present;
  if (choice.node) wanted = ranks_of_node(logs.folder, *choice.node);
  if (choice.ranks) {
    std::vector<int> narrowed;
    for (int rank : *choice.ranks)
      if (std::find(wanted.begin(), wanted.end(), rank) != wanted.end()) narrowed.push_back(rank);
    wanted = narrowed;
  }
  for (int rank : wanted) {
    if (std::find(present.begin(), present.end(), rank) == present.end()) continue;
    std::string dir = fmt::format("{}/rank{}", logs.folder, rank);
    logs.ranks.push_back({rank, file_if_there(dir + "/stdout.log"), file_if_there(dir + "/stderr.log")});
  }
  if (logs.ranks.empty())
    throw util::InputError(fmt::format("no logs of the ranks asked for in {} (ranks there: {})", logs.folder,
                                       numbers_text(present)));
  return logs;
}

}  // namespace dlaunch::jobs
