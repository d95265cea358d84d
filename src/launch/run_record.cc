#include "launch/run_record.h"

#include <filesystem>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "util/atomic_file.h"
#include "util/error.h"
#include "util/local_time.h"

namespace dlaunch::launch {
namespace {

std::string write_json(const std::string& path, const nlohmann::json& document) {
  try {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    util::write_file_atomically(path, document.dump(2) + "\n");
    return "";
  } catch (const std::exception& error) {
    return fmt::format("cannot write {}: {}", path, error.what());
  }
}

}  // namespace

std::string write_node_record(const std::string& log_root, const rendezvous::World& world, int node_rank,
                              const std::string& host) {
  nlohmann::json ranks = nlohmann::json::array();
  const int first = world.rank_offset(node_rank);
  for (int local = 0; local < world.nproc_per_node[static_cast<std::size_t>(node_rank)]; ++local)
    ranks.push_back(first + local);
  nlohmann::json document = {{"node_rank", node_rank}, {"host", host}, {"ranks", ranks}, {"round", world.round}};
  return write_json(fmt::format("{}/attempt_{}/node{}.json", log_root, world.round, node_rank), document);
}

std::string write_run_result(const std::string& log_root, const rendezvous::Verdict& verdict, int round,
                             const std::string& summary, const std::string& started) {
  nlohmann::json document = {
      {"exit_code", verdict.exit_code},
      {"state", verdict.kind == rendezvous::Verdict::Kind::kSucceeded ? "COMPLETED" : "FAILED"},
      {"restarts", round},
      {"failure", verdict.failure ? rendezvous::describe_failure(*verdict.failure) : ""},
      {"not_restarted", verdict.not_restarted},
      {"failure_summary", summary},
      {"timeline", verdict.timeline},
      {"started", started},
      {"ended", util::local_time_now()},
  };
  return write_json(fmt::format("{}/{}", log_root, kRunResultFile), document);
}

}  // namespace dlaunch::launch
