// The record of a submission Slurm never took (never_submitted.h).
#include "jobs/never_submitted.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "util/atomic_file.h"
#include "util/bounded_json.h"
#include "util/strings.h"

namespace dlaunch::jobs {
namespace {

// A refusal is a few lines of sbatch's; a megabyte is room and a bound.
constexpr std::size_t kMaxRecordBytes = 1 << 20;

std::vector<std::string> lines_of(const std::string& message) {
  std::vector<std::string> lines;
  for (const auto& line : util::split(message, '\n'))
    if (!util::trim(line).empty()) lines.emplace_back(util::trim(line));
  return lines;
}

}  // namespace

std::string never_submitted_summary(const NeverSubmitted& why) {
  auto lines = lines_of(why.message);
  const std::string last = lines.empty() ? "it said nothing" : lines.back();
  if (why.may_be_queued) return fmt::format("{} exited 0 but printed no job id: {}", why.program, last);
  if (!why.exit_code) return fmt::format("{} could not be run: {}", why.program, last);
  return fmt::format("{} refused it, exit code {}: {}", why.program, *why.exit_code, last);
}

std::string never_submitted_message(const NeverSubmitted& why) { return util::join(lines_of(why.message), " / "); }

std::string record_never_submitted(const std::string& folder, const NeverSubmitted& why) {
  nlohmann::json document = {{"program", why.program},   {"message", why.message},
                             {"recorded", why.recorded}, {"may_be_queued", why.may_be_queued}};
  document["exit_code"] = why.exit_code ? nlohmann::json(*why.exit_code) : nlohmann::json();
  try {
    util::write_file_atomically(folder + "/" + kNotSubmittedFileName, document.dump(2) + "\n");
    return "";
  } catch (const std::exception& error) {
    return error.what();
  }
}

std::optional<NeverSubmitted> read_never_submitted(const std::string& folder) {
  std::optional<nlohmann::json> document;
  try {
    document = util::read_json_file(folder + "/" + kNotSubmittedFileName,
                                    {"the record of a refused submission", kMaxRecordBytes, util::Links::kRefuse});
  } catch (const std::exception&) {
    return std::nullopt;  // unreadable: the folder reads as before
  }
  if (!document || !document->is_object()) return std::nullopt;
  NeverSubmitted why;
  why.program = util::string_member(*document, "program");
  if (why.program.empty()) why.program = "sbatch";
  why.message = util::string_member(*document, "message");
  why.recorded = util::string_member(*document, "recorded");
  auto code = document->find("exit_code");
  if (code != document->end() && code->is_number_integer()) why.exit_code = code->get<int>();
  auto queued = document->find("may_be_queued");
  why.may_be_queued = queued != document->end() && queued->is_boolean() && queued->get<bool>();
  return why;
}

}  // namespace dlaunch::jobs
