// hostfile_fuzz: dlaunch ssh's host selection (ssh/host_file.h) on any text.
//
// The input is a hostfile, then optionally a NUL and an --include
// selection, then a NUL and an --exclude selection. Checks that the only
// failure is InputError, that a parsed file lists each host once with a
// slot count in 1..1024 and none as HOST:N (one colon), and that a
// selection keeps hosts of the file, in its order, each with its selected
// slots among the file's slots. Hostlist ranges are bounded by the parser
// itself (100000 hosts), so no cap here.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "ssh/host_file.h"
#include "util/error.h"

namespace {

using namespace dlaunch;

void check(bool condition, const char* what) {
  if (condition) return;
  std::fprintf(stderr, "hostfile_fuzz: invariant broken: %s\n", what);
  std::abort();
}

std::vector<std::string_view> parts_of(std::string_view input) {
  std::vector<std::string_view> parts;
  for (int i = 0; i < 2; ++i) {
    auto nul = input.find('\0');
    if (nul == std::string_view::npos) break;
    parts.push_back(input.substr(0, nul));
    input.remove_prefix(nul + 1);
  }
  parts.push_back(input);
  return parts;
}

std::optional<std::string> part(const std::vector<std::string_view>& parts, std::size_t index) {
  if (index >= parts.size()) return std::nullopt;
  return std::string(parts[index]);
}

void check_selection(const std::vector<ssh::HostEntry>& file, const std::vector<ssh::HostEntry>& kept) {
  check(!kept.empty(), "a selection kept no host without an error");
  std::size_t position = 0;
  for (const auto& entry : kept) {
    auto found = std::find_if(file.begin() + static_cast<long>(position), file.end(),
                              [&](const ssh::HostEntry& original) { return original.host == entry.host; });
    check(found != file.end(), "a selection kept a host the file lacks, or reordered them");
    position = static_cast<std::size_t>(found - file.begin()) + 1;
    if (entry.selected.empty()) continue;
    check(found->slots.has_value(), "slots were selected of a host without slots");
    check(entry.slots == static_cast<int>(entry.selected.size()), "the slot count is not the selection's");
    for (int slot : entry.selected) check(slot >= 0 && slot < *found->slots, "a selected slot is out of range");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto parts = parts_of(std::string_view(reinterpret_cast<const char*>(data), size));
  std::vector<ssh::HostEntry> file;
  try {
    file = ssh::parse_host_file(parts[0], "fuzz");
  } catch (const util::InputError&) {
    return 0;
  }
  std::set<std::string> seen;
  for (const auto& entry : file) {
    check(seen.insert(entry.host).second, "a host was listed twice without an error");
    check(!entry.slots || (*entry.slots >= 1 && *entry.slots <= 1024), "a slot count is out of range");
    check(std::count(entry.host.begin(), entry.host.end(), ':') != 1, "a HOST:N host was taken as a name");
  }
  try {
    check_selection(file, ssh::select_hosts(file, part(parts, 1), part(parts, 2)));
  } catch (const util::InputError&) {
  }
  return 0;
}
