#include "slurm/tasks_per_node.h"

#include <fmt/format.h>

#include "util/error.h"
#include "util/strings.h"

namespace dlaunch::slurm {
namespace {

// Far above any Slurm cluster, and each repeat below 10^6 too: without a cap
// on the sum, a few kilobytes of "1(x1000000),..." asked for gigabytes
// (found by fuzz/slurm_env_fuzz).
constexpr std::size_t kMaxNodes = 1'000'000;

}  // namespace

std::vector<int> parse_tasks_per_node(const std::string& text) {
  auto bad = [&] {
    return util::InputError(fmt::format(
        "SLURM_TASKS_PER_NODE='{}' is not Slurm's format (e.g. '4(x2),2')", text));
  };
  std::vector<int> counts;
  for (const auto& item : util::split(text, ',')) {
    std::string_view part = util::trim(item);
    std::int64_t repeat = 1;
    std::size_t open = part.find('(');
    if (open != std::string_view::npos) {
      if (part.size() < open + 4 || part.substr(open, 2) != "(x" || part.back() != ')') throw bad();
      auto times = util::parse_int(part.substr(open + 2, part.size() - open - 3));
      if (!times || *times < 1 || *times > 1'000'000) throw bad();
      repeat = *times;
      part = part.substr(0, open);
    }
    auto count = util::parse_int(part);
    if (!count || *count < 0 || *count > 1'000'000) throw bad();
    if (counts.size() + static_cast<std::size_t>(repeat) > kMaxNodes)
      throw util::InputError(fmt::format("SLURM_TASKS_PER_NODE names more than {} nodes; expected one "
                                   "count per node of the step, as Slurm writes it (e.g. '4(x2),2')",
                                   kMaxNodes));
    counts.insert(counts.end(), static_cast<std::size_t>(repeat), static_cast<int>(*count));
  }
  return counts;
}

}  // namespace dlaunch::slurm
