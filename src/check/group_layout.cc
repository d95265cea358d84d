#include "check/group_layout.h"

#include <algorithm>
#include <fmt/format.h>

namespace dlaunch::check {

GroupLayout gather_layout(collective::Communicator& communicator, const std::string& host) {
  constexpr std::size_t kSlot = 64;  // host names longer than this are cut
  const auto size = static_cast<std::size_t>(communicator.size());
  std::vector<std::int64_t> names(size * kSlot, 0);
  const auto rank = static_cast<std::size_t>(communicator.rank());
  for (std::size_t i = 0; i < std::min(host.size(), kSlot - 1); ++i)
    names[rank * kSlot + i] = static_cast<unsigned char>(host[i]);
  communicator.allreduce_sum(names.data(), names.size());

  GroupLayout layout;
  for (std::size_t r = 0; r < size; ++r) {
    std::string name;
    for (std::size_t i = 0; i < kSlot && names[r * kSlot + i] != 0; ++i)
      name.push_back(static_cast<char>(names[r * kSlot + i]));
    layout.host_of_rank.push_back(name);
    if (layout.ranks_per_host[name]++ == 0) {
      layout.hosts.push_back(name);
      layout.first_rank_of_host[name] = static_cast<int>(r);
    }
  }
  return layout;
}

std::string describe_ranks_per_host(const GroupLayout& layout) {
  std::vector<std::string> parts;
  for (const auto& host : layout.hosts)
    parts.push_back(fmt::format("{}={}", host, layout.ranks_per_host.at(host)));
  return fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace dlaunch::check
