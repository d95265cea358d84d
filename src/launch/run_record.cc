#include "launch/run_record.h"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "doctor/diagnosis.h"
#include "util/atomic_file.h"
#include "util/bounded_json.h"
#include "util/error.h"
#include "util/exit_codes.h"
#include "util/local_time.h"
#include "util/outside_file.h"
#include "util/trusted_folder.h"

namespace dlaunch::launch {
namespace {

// Writes DOCUMENT to PATH. NEW_FOLDERS 0: PATH is in the log root (made,
// and checked, by LogRoot; made here too if missing); otherwise its last
// NEW_FOLDERS folders are made first, each new or one of ours that is no
// link (util/trusted_folder.h).
std::string write_json(const std::string& path, const nlohmann::json& document, int new_folders = 0) {
  try {
    const std::string folder = std::filesystem::path(path).parent_path().string();
    if (new_folders == 0) std::filesystem::create_directories(folder);
    else util::make_own_folders(folder, new_folders);
    util::write_file_atomically(path, document.dump(2) + "\n");
    return "";
  } catch (const std::exception& error) {
    return fmt::format("cannot write {}: {}", path, error.what());
  }
}

// A record is some KiB (result.json holds the failure summary's lines).
constexpr std::size_t kMaxRecordBytes = 4 << 20;

// The JSON object at PATH, or null when it is missing or unreadable. The
// folder may be shared, or have been copied or damaged: only a regular
// file of at most kMaxRecordBytes, nested at most util::kMaxJsonDepth, is
// read; dlaunch wrote it, so a link there is refused too.
nlohmann::json read_json(const std::string& path) {
  try {
    auto document =
        util::read_json_file(path, {"a run record dlaunch wrote (JSON)", kMaxRecordBytes, util::Links::kRefuse});
    return document && document->is_object() ? *document : nlohmann::json(nullptr);
  } catch (const std::exception&) {
    return nullptr;
  }
}

std::string text_field(const nlohmann::json& document, const char* name) {
  auto found = document.find(name);
  return found != document.end() && found->is_string() ? found->get<std::string>() : "";
}

bool of_job(const nlohmann::json& document, const std::string& incarnation) {
  return document.is_object() && text_field(document, "job") == incarnation;
}

// DOCUMENT, with what EXISTING (this job's result, made alone by another
// launcher) saw otherwise kept in its "also_seen".
nlohmann::json keeping_other_views(nlohmann::json document, const nlohmann::json& existing) {
  nlohmann::json also = nlohmann::json::array();
  if (auto earlier = existing.find("also_seen"); earlier != existing.end() && earlier->is_array()) also = *earlier;
  const std::string failure = text_field(existing, "failure");
  if (!failure.empty() && failure != text_field(document, "failure")) {
    std::string seen = fmt::format("{}: {}", text_field(existing, "written_by"), failure);
    if (std::find(also.begin(), also.end(), seen) == also.end()) also.push_back(seen);
  }
  if (!also.empty()) document["also_seen"] = also;
  return document;
}

// A network cut between two nodes: each side sees the other go silent, and
// neither can tell which was cut off. The result kept is the first; a
// launcher that decided otherwise adds what it saw ("also_seen"), so the
// record names both sides.
std::string add_another_view(const std::string& path, nlohmann::json document, const RunResult& result) {
  if (!document.is_object() || !result.verdict.failure) return "";
  std::string seen = fmt::format("{}: {}", result.host, rendezvous::describe_failure(*result.verdict.failure));
  if (text_field(document, "failure") == rendezvous::describe_failure(*result.verdict.failure)) return "";
  nlohmann::json& also = document["also_seen"];
  if (!also.is_array()) also = nlohmann::json::array();
  for (const auto& line : also)
    if (line == seen) return "";
  also.push_back(seen);
  return write_json(path, document);
}

}  // namespace

std::string write_node_record(const std::string& log_root, const rendezvous::World& world, int node_rank,
                              const std::string& host) {
  nlohmann::json ranks = nlohmann::json::array();
  const int first = world.rank_offset(node_rank);
  for (int local = 0; local < world.nproc_per_node[static_cast<std::size_t>(node_rank)]; ++local)
    ranks.push_back(first + local);
  nlohmann::json document = {{"node_rank", node_rank}, {"host", host}, {"ranks", ranks},
                             {"round", world.round}, {"job", world.incarnation}};
  if (static_cast<std::size_t>(node_rank) < world.node_slots.size())
    document["slot"] = world.node_slots[static_cast<std::size_t>(node_rank)];
  return write_json(fmt::format("{}/attempt_{}/node{}.json", log_root, world.round, node_rank), document, 1);
}

namespace {

// The doctor's reading of the verdict's root failure (doctor/diagnosis.h)
// for `dlaunch status` and tools: null when the job did not fail.
nlohmann::json root_of(const rendezvous::Verdict& verdict) {
  if (!verdict.failure) return nullptr;
  const rendezvous::Failure& failure = *verdict.failure;
  doctor::Diagnosis diagnosis = doctor::diagnose(failure);
  nlohmann::json root = {
      {"summary", doctor::root_cause_line(failure, diagnosis)},
      {"rank", failure.global_rank},
      {"node_rank", failure.node_rank},
      {"kind", doctor::kind_id(diagnosis.kind)},
      {"exception", diagnosis.exception_type},
      {"message", diagnosis.exception_message},
      {"file", diagnosis.user_frame ? diagnosis.user_frame->file : ""},
      {"line", diagnosis.user_frame ? diagnosis.user_frame->line : 0},
      {"traceback", diagnosis.traceback},
      {"signature", diagnosis.signature},
      {"consequences", verdict.consequences},
  };
  return root;
}

}  // namespace

std::string write_run_result(const std::string& log_root, const RunResult& result) {
  const rendezvous::Verdict& verdict = result.verdict;
  nlohmann::json document = {
      {"exit_code", verdict.exit_code},
      {"state", verdict.kind == rendezvous::Verdict::Kind::kSucceeded ? "COMPLETED" : "FAILED"},
      {"restarts", result.round},
      {"failure", verdict.failure ? rendezvous::describe_failure(*verdict.failure) : ""},
      {"not_restarted", verdict.not_restarted},
      {"failure_summary", result.summary},
      {"timeline", verdict.timeline},
      {"started", result.started},
      {"ended", util::local_time_now()},
      {"job", result.incarnation},
      {"written_by", result.host},
      {"decided_alone", verdict.decided_here},
      {"root", root_of(verdict)},
  };
  const std::string path = fmt::format("{}/{}", log_root, kRunResultFile);
  // A service's verdict says most; one made alone replaces no result of
  // this job (another launcher's, or the service's), but one an earlier run
  // of the same folder left (--log-dir reused) is not this job's.
  nlohmann::json existing = read_json(path);
  if (!of_job(existing, result.incarnation)) return write_json(path, document);
  if (!verdict.decided_here) return write_json(path, keeping_other_views(std::move(document), existing));
  try {
    if (util::write_file_if_absent(path, document.dump(2) + "\n")) return "";
  } catch (const std::exception& error) {
    return fmt::format("cannot write {}: {}", path, error.what());
  }
  return add_another_view(path, read_json(path), result);
}

namespace {

// The first round after PLACE's whose records name this job, and them.
std::optional<std::pair<int, std::filesystem::path>> later_round(const std::string& log_root,
                                                                 const rendezvous::LauncherPlace& place) {
  std::error_code ignored;
  for (int round = place.round + 1; round <= place.round + 64; ++round) {
    std::filesystem::path folder = fmt::format("{}/attempt_{}", log_root, round);
    if (!std::filesystem::is_directory(folder, ignored)) return std::nullopt;
    for (const auto& entry : std::filesystem::directory_iterator(folder, ignored)) {
      const std::string name = entry.path().filename().string();
      if (name.starts_with("node") && name.ends_with(".json") && of_job(read_json(entry.path().string()), place.incarnation))
        return std::make_pair(round, folder);
    }
  }
  return std::nullopt;
}

// Whether RESULT is a verdict another launcher made alone in PLACE's own
// round: it lost node 0 at the same moment as this launcher (node 0's
// launcher killed, its host lost, no spare to go on with), so it decided
// beside this one, not after it: this launcher was not left behind, and
// decides alone too (its view is added as "also_seen" when it differs).
// Not when this launcher was that node 0: the verdict was made without it.
bool decided_beside(const nlohmann::json& result, const rendezvous::LauncherPlace& place) {
  if (place.node_rank == 0) return false;
  auto alone = result.find("decided_alone");
  auto round = result.find("restarts");
  return alone != result.end() && alone->is_boolean() && alone->get<bool>() && round != result.end() &&
         round->is_number_integer() && round->get<int>() == place.round;
}

}  // namespace

std::string note_slurm_end(const std::string& log_root, const std::string& incarnation, const std::string& text) {
  const std::string path = fmt::format("{}/{}", log_root, kRunResultFile);
  nlohmann::json document = read_json(path);
  if (!of_job(document, incarnation)) return fmt::format("cannot add to {}: it holds no result of this job", path);
  document["slurm_end"] = text;
  return write_json(path, document);
}

std::optional<std::string> job_moved_on(const std::string& log_root, const rendezvous::LauncherPlace& place) {
  if (log_root.empty() || place.incarnation.empty()) return std::nullopt;
  nlohmann::json result = read_json(fmt::format("{}/{}", log_root, kRunResultFile));
  if (of_job(result, place.incarnation) && !decided_beside(result, place)) {
    std::string by = text_field(result, "written_by");
    auto code = result.find("exit_code");
    std::string with_code = code != result.end() && code->is_number_integer()
                                ? fmt::format(" with {}", util::describe_exit_code(code->get<int>()))
                                : "";
    return fmt::format("the job was decided while this launcher ({}) was unreachable: {}{}{}", place.host,
                       text_field(result, "state"), with_code,
                       by.empty() ? "" : fmt::format(", by the launcher on {}", by));
  }
  auto later = later_round(log_root, place);
  if (!later) return std::nullopt;
  const auto& [round, folder] = *later;
  if (place.node_rank) {
    nlohmann::json successor = read_json((folder / fmt::format("node{}.json", *place.node_rank)).string());
    std::string host = of_job(successor, place.incarnation) ? text_field(successor, "host") : "";
    auto slot = successor.is_object() ? successor.find("slot") : successor.end();
    bool another = slot != successor.end() && slot->is_number_integer() && slot->get<int>() != place.slot;
    if (!host.empty() && another)
      return fmt::format("this node ({}, node rank {}) was replaced by {} (slot {}) in round {} while it was "
                         "unreachable",
                         place.host, *place.node_rank, host, slot->get<int>(), round);
  }
  return fmt::format("the job went on to round {} without this launcher ({}) while it was unreachable", round,
                     place.host);
}

}  // namespace dlaunch::launch
