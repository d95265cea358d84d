#include "slurm/job_id.h"

#include <fmt/format.h>

#include "util/error.h"

namespace dlaunch::slurm {
namespace {

bool digits(std::string_view text, std::size_t most) {
  return !text.empty() && text.size() <= most && text.find_first_not_of("0123456789") == std::string_view::npos;
}

}  // namespace

bool is_job_id(std::string_view text) {
  const std::size_t mark = text.find_first_of("_+");
  if (!digits(text.substr(0, mark), 10)) return false;
  if (mark == std::string_view::npos) return true;
  return digits(text.substr(mark + 1), text[mark] == '_' ? 7 : 4);
}

const std::string& checked_job_id(const std::string& text, std::string_view source) {
  if (is_job_id(text)) return text;
  // The text may be anything (a planted file): shown cut, quoted and escaped.
  std::string shown = text.substr(0, 40);
  if (text.size() > shown.size()) shown.append("...");
  throw util::InputError(fmt::format("{} holds {:?}, which is not a Slurm job id (digits: 12, 12_3 for an "
                                     "array task, 12+1 for a part of a heterogeneous job); no Slurm command "
                                     "is run with it. Give the right job id, or fix or remove what holds it",
                                     source, shown));
}

std::vector<std::string> job_command(std::vector<std::string> command, const std::string& job_id) {
  command.push_back("--");
  command.push_back(checked_job_id(job_id, fmt::format("the job id given to {}", command.front())));
  return command;
}

}  // namespace dlaunch::slurm
