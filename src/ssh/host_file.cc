#include "ssh/host_file.h"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <set>

#include "slurm/hostlist.h"
#include "util/error.h"
#include "util/strings.h"

namespace dlaunch::ssh {
namespace {

// A slot count above this is a typo, not a machine.
constexpr int kMaxSlots = 1024;
// A host list longer than this is a typo ("gpu[1-1000000]"), and expanding
// it would only eat memory.
constexpr std::size_t kMaxHosts = 100'000;

// The hosts of a hostlist EXPRESSION, counted before they are expanded.
std::vector<std::string> expand_bounded(std::string_view expression, const std::string& where,
                                        std::size_t already) {
  std::size_t count = slurm::count_hosts(expression);
  if (already + count > kMaxHosts)
    throw util::InputError(fmt::format("{}: '{}' makes the host list longer than {} hosts; check the range",
                                 where, expression, kMaxHosts));
  return slurm::expand_hostlist(expression);
}

std::vector<std::string> words_of(std::string_view line) {
  std::vector<std::string> words;
  std::string word;
  for (char c : line) {
    if (c == ' ' || c == '\t' || c == '\r') {
      if (!word.empty()) words.push_back(std::move(word));
      word.clear();
    } else {
      word += c;
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
  return words;
}

void add_unique(std::vector<HostEntry>& hosts, std::set<std::string>& seen, HostEntry entry,
                const std::string& where) {
  if (!seen.insert(entry.host).second)
    throw util::InputError(fmt::format("{}: host '{}' is listed twice; list each host once (give it "
                                 "slots=N for several workers)",
                                 where, entry.host));
  hosts.push_back(std::move(entry));
}

// "node1:4": MPI's and Horovod's HOST:SLOTS, or HOST:PORT. No host name
// holds a ':', and an IPv6 address holds two or more.
bool has_colon_suffix(std::string_view word) { return std::count(word.begin(), word.end(), ':') == 1; }

// "node1:4" on a hostfile line: said how to give its slots (or its port).
void refuse_colon_suffix(std::string_view word, const std::string& where) {
  if (!has_colon_suffix(word)) return;
  auto colon = word.find(':');
  std::string_view host = word.substr(0, colon), suffix = word.substr(colon + 1);
  bool count = !suffix.empty() && suffix.find_first_not_of("0123456789") == std::string_view::npos;
  throw util::InputError(fmt::format(
      "{}: '{}' is no host name{}; a line here is 'HOST [slots=N]'{}. An ssh port goes in ~/.ssh/config "
      "(Host {} / Port N)",
      where, word, count ? " (HOST:N is MPI's and Horovod's way to give slots)" : "",
      count ? fmt::format(": for {} workers write '{} slots={}'", suffix, host, suffix) : "", host));
}

int parse_slots(std::string_view word, const std::string& where) {
  return static_cast<int>(
      util::parse_int_in_range(word.substr(6), 1, kMaxSlots, where + ": slots"));
}

// "host1:0,2" -> {"host1", {0, 2}}; "host1" -> {"host1", {}}.
std::map<std::string, std::vector<int>> parse_selection(const std::string& text,
                                                        const char* option) {
  std::map<std::string, std::vector<int>> selection;
  for (const auto& part : util::split(text, '@')) {
    std::string_view item = util::trim(part);
    if (item.empty())
      throw util::InputError(fmt::format("{} '{}': an empty host between '@'; expected HOST[:SLOT,...]@...",
                                   option, text));
    auto colon = item.find(':');
    std::string_view names = item.substr(0, colon);
    std::vector<int> slots;
    if (colon != std::string_view::npos) {
      for (const auto& slot : util::split(item.substr(colon + 1), ','))
        slots.push_back(static_cast<int>(util::parse_int_in_range(
            util::trim(slot), 0, kMaxSlots - 1, fmt::format("{} '{}': slot", option, text))));
    }
    for (const auto& host : expand_bounded(names, option, selection.size())) selection[host] = slots;
  }
  return selection;
}

std::vector<int> all_slots(const HostEntry& entry) {
  if (!entry.selected.empty()) return entry.selected;
  std::vector<int> slots(static_cast<std::size_t>(entry.slots.value_or(0)));
  for (std::size_t i = 0; i < slots.size(); ++i) slots[i] = static_cast<int>(i);
  return slots;
}

void check_slots(const HostEntry& entry, const std::vector<int>& slots, const char* option) {
  if (slots.empty()) return;
  if (!entry.slots)
    throw util::InputError(fmt::format("{} selects slots of '{}', which has no slots=N; give it a slot "
                                 "count in the hostfile",
                                 option, entry.host));
  std::vector<int> available = all_slots(entry);
  for (int slot : slots) {
    if (std::find(available.begin(), available.end(), slot) == available.end())
      throw util::InputError(fmt::format("{} selects slot {} of '{}', which has slots {}", option, slot,
                                   entry.host, fmt::join(available, ",")));
  }
}

// Sets ENTRY's selection to SLOTS, so it runs one worker per kept slot.
void keep_slots(HostEntry& entry, std::vector<int> slots) {
  std::sort(slots.begin(), slots.end());
  slots.erase(std::unique(slots.begin(), slots.end()), slots.end());
  entry.selected = slots;
  entry.slots = static_cast<int>(slots.size());
}

// One lookup per named host: both lists may hold tens of thousands of names
// (a hostlist range expands), and a scan per name was quadratic (found by
// hostfile_fuzz: 31113 names took over a minute).
void require_known(const std::map<std::string, std::vector<int>>& selection,
                   const std::vector<HostEntry>& hosts, const char* option) {
  std::set<std::string_view> known;
  for (const auto& entry : hosts) known.insert(entry.host);
  for (const auto& named : selection) {
    if (known.count(named.first) == 0)
      throw util::InputError(
          fmt::format("{} names host '{}', which is not in the host list", option, named.first));
  }
}

}  // namespace

std::vector<HostEntry> parse_host_file(std::string_view text, std::string_view source) {
  std::vector<HostEntry> hosts;
  std::set<std::string> seen;
  int number = 0;
  for (const auto& raw : util::split(text, '\n')) {
    ++number;
    std::string_view line = raw;
    line = line.substr(0, line.find('#'));
    auto words = words_of(line);
    if (words.empty()) continue;
    std::string where = fmt::format("{}:{}", source, number);
    refuse_colon_suffix(words[0], where);  // before expanding, to name "gpu[01-04]:8" as written
    std::optional<int> slots;
    for (std::size_t i = 1; i < words.size(); ++i) {
      if (!words[i].starts_with("slots=") || slots)
        throw util::InputError(fmt::format("{}: unexpected '{}'; expected 'HOST [slots=N]' (HOST may be a "
                                     "hostlist such as gpu[01-04])",
                                     where, words[i]));
      slots = parse_slots(words[i], where);
    }
    for (const auto& host : expand_bounded(words[0], where, hosts.size())) {
      refuse_colon_suffix(host, where);  // "a:4,b:4" has two colons, each host one
      add_unique(hosts, seen, HostEntry{host, slots, {}}, where);
    }
  }
  if (hosts.empty())
    throw util::InputError(fmt::format("{} lists no host; expected one 'HOST [slots=N]' a line", source));
  return hosts;
}

std::vector<HostEntry> parse_host_list(std::string_view text) {
  std::vector<HostEntry> hosts;
  std::set<std::string> seen;
  for (const auto& host : expand_bounded(text, "--hosts", 0)) {
    if (has_colon_suffix(host))
      throw util::InputError(fmt::format(
          "--hosts '{}': '{}' is no host name. --hosts takes names only: for the same worker count on "
          "every host give --nproc-per-node N, for counts per host a --hostfile whose lines are "
          "'HOST slots=N'; an ssh port goes in ~/.ssh/config (Host NAME / Port N)",
          text, host));
    add_unique(hosts, seen, HostEntry{host, std::nullopt, {}}, "--hosts");
  }
  if (hosts.empty())
    throw util::InputError("--hosts is empty; expected host names such as h1,h2 or gpu[01-04]");
  return hosts;
}

std::vector<HostEntry> select_hosts(std::vector<HostEntry> hosts,
                                    const std::optional<std::string>& include,
                                    const std::optional<std::string>& exclude) {
  // Both selections name hosts of the list as given, whichever applies first.
  std::map<std::string, std::vector<int>> included, excluded;
  if (include) {
    included = parse_selection(*include, "--include");
    require_known(included, hosts, "--include");
  }
  if (exclude) {
    excluded = parse_selection(*exclude, "--exclude");
    require_known(excluded, hosts, "--exclude");
  }
  if (include) {
    auto& selection = included;
    std::erase_if(hosts, [&](const HostEntry& entry) { return selection.count(entry.host) == 0; });
    for (auto& entry : hosts) {
      const auto& slots = selection[entry.host];
      check_slots(entry, slots, "--include");
      if (!slots.empty()) keep_slots(entry, slots);
    }
  }
  if (exclude) {
    auto& selection = excluded;
    std::erase_if(hosts, [&](const HostEntry& entry) {
      auto found = selection.find(entry.host);
      return found != selection.end() && found->second.empty();
    });
    for (auto& entry : hosts) {
      auto found = selection.find(entry.host);
      if (found == selection.end()) continue;
      check_slots(entry, found->second, "--exclude");
      std::vector<int> kept;
      for (int slot : all_slots(entry)) {
        if (std::find(found->second.begin(), found->second.end(), slot) == found->second.end())
          kept.push_back(slot);
      }
      keep_slots(entry, kept);
    }
    std::erase_if(hosts, [](const HostEntry& entry) { return entry.slots && *entry.slots == 0; });
  }
  if (hosts.empty())
    throw util::InputError("--include/--exclude leave no host to run on; check the selection against "
                     "the host list");
  return hosts;
}

}  // namespace dlaunch::ssh
