#include "slurm/bench_record.h"

#include <algorithm>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "util/bounded_json.h"
#include "util/error.h"
#include "util/strings.h"

namespace dlaunch::slurm {
namespace {

// The reason as one short line: a health check's output may hold newlines.
constexpr std::size_t kMaxWhyBytes = 300;

std::string one_line(std::string_view text) {
  std::string line;
  for (char c : text) {
    if (line.size() >= kMaxWhyBytes) break;
    line += (c == '\n' || c == '\r' || c == '\t') ? ' ' : c;
  }
  return line;
}

BenchEntry* find_host(BenchRecord& record, std::string_view host) {
  for (auto& entry : record.hosts) {
    if (entry.host == host) return &entry;
  }
  return nullptr;
}

bool contains(const std::vector<std::string>& hosts, std::string_view host) {
  return std::find(hosts.begin(), hosts.end(), host) != hosts.end();
}

// The field NAME of ENTRY (a JSON object) as an integer in [LOW, HIGH].
std::int64_t int_field(const nlohmann::json& entry, const char* name, std::int64_t low, std::int64_t high,
                       const std::string& host) {
  auto it = entry.find(name);
  if (it == entry.end() || !it->is_number_integer())
    throw util::InputError(fmt::format("host '{}' has no whole number '{}'", host, name));
  auto value = it->get<std::int64_t>();
  if (value < low || value > high)
    throw util::InputError(fmt::format("host '{}' has '{}' {}, outside {} to {}", host, name, value, low, high));
  return value;
}

BenchEntry parse_entry(const std::string& host, const nlohmann::json& value) {
  if (!is_node_name(host)) throw util::InputError(fmt::format("'{}' is no Slurm node name", util::escaped(host)));
  if (!value.is_object()) throw util::InputError(fmt::format("host '{}' is not an object", host));
  // Far past any real date: keeps the sums in bench_cooldown() and the
  // comparisons with now from overflowing.
  constexpr std::int64_t kLatest = std::int64_t{1} << 40;
  BenchEntry entry;
  entry.host = host;
  entry.last_benched = int_field(value, "last_benched", 0, kLatest, host);
  entry.times = static_cast<int>(int_field(value, "times", 1, 1'000'000, host));
  entry.excluded_until = int_field(value, "excluded_until", 0, kLatest, host);
  auto why = value.find("why");
  if (why != value.end() && !why->is_string())
    throw util::InputError(fmt::format("host '{}' has a 'why' that is not a string", host));
  if (why != value.end()) entry.why = one_line(why->get<std::string>());
  auto added = value.find("added_by_dlaunch");
  if (added != value.end() && !added->is_boolean())
    throw util::InputError(fmt::format("host '{}' has an 'added_by_dlaunch' that is not true or false", host));
  entry.added_by_dlaunch = added != value.end() && added->get<bool>();
  return entry;
}

}  // namespace

std::int64_t bench_cooldown(std::int64_t base, int times) {
  std::int64_t cooldown = std::clamp<std::int64_t>(base, 0, kMaxBenchCooldown);
  for (int i = 1; i < times && cooldown < kMaxBenchCooldown; ++i) cooldown *= 2;
  return std::min(cooldown, kMaxBenchCooldown);
}

void merge_benched(BenchRecord& record, const std::vector<BenchedHost>& benched, std::int64_t now,
                   std::int64_t base) {
  std::erase_if(record.hosts,
                [now](const BenchEntry& entry) { return entry.excluded_until + kMaxBenchCooldown < now; });
  for (const auto& host : benched) {
    BenchEntry* entry = find_host(record, host.host);
    if (!entry) entry = &record.hosts.emplace_back(BenchEntry{host.host, now, 0, "", now, false});
    entry->times += 1;
    entry->last_benched = now;
    entry->why = one_line(host.why);
    entry->excluded_until = now + bench_cooldown(base, entry->times);
  }
}

std::vector<BenchEntry> in_cooldown(const BenchRecord& record, std::int64_t now) {
  std::vector<BenchEntry> cooling;
  for (const auto& entry : record.hosts) {
    if (entry.excluded_until > now) cooling.push_back(entry);
  }
  return cooling;
}

Exclusion plan_exclusion(const BenchRecord& record, const std::vector<std::string>& current, std::int64_t now) {
  Exclusion exclusion;
  for (const auto& host : current) {
    if (contains(exclusion.hosts, host)) continue;
    auto entry = std::find_if(record.hosts.begin(), record.hosts.end(),
                              [&](const BenchEntry& known) { return known.host == host; });
    // dlaunch's own entry, cooled down: out. No entry, or the user's: stays.
    if (entry != record.hosts.end() && entry->added_by_dlaunch && entry->excluded_until <= now) {
      exclusion.released.push_back(host);
      continue;
    }
    exclusion.hosts.push_back(host);
  }
  for (const auto& entry : in_cooldown(record, now)) {
    if (contains(exclusion.hosts, entry.host)) continue;
    exclusion.hosts.push_back(entry.host);
    exclusion.added.push_back(entry.host);
  }
  return exclusion;
}

void note_exclusion(BenchRecord& record, const Exclusion& exclusion) {
  for (const auto& host : exclusion.added) {
    if (auto* entry = find_host(record, host)) entry->added_by_dlaunch = true;
  }
  for (const auto& host : exclusion.released) {
    if (auto* entry = find_host(record, host)) entry->added_by_dlaunch = false;
  }
}

std::string bench_record_json(const BenchRecord& record) {
  nlohmann::json hosts = nlohmann::json::object();
  for (const auto& entry : record.hosts) {
    hosts[entry.host] = {{"last_benched", entry.last_benched},
                         {"times", entry.times},
                         {"why", entry.why},
                         {"excluded_until", entry.excluded_until},
                         {"added_by_dlaunch", entry.added_by_dlaunch}};
  }
  nlohmann::json document = {{"version", 1}, {"hosts", hosts}};
  return document.dump(2) + "\n";
}

BenchRecord parse_bench_record(std::string_view text, const std::string& path) {
  auto fail = [&](const std::string& why) {
    return util::InputError(fmt::format("the bench record {} is not usable: {}", path, why));
  };
  if (text.size() > kMaxBenchRecordBytes)
    throw fail(fmt::format("it has {} bytes, more than the {} a record may have", text.size(), kMaxBenchRecordBytes));
  std::string why;
  nlohmann::json document = util::parse_json_bounded(text, &why);
  if (document.is_discarded()) throw fail(fmt::format("not JSON ({})", why));
  if (!document.is_object()) throw fail("not a JSON object");
  auto hosts = document.find("hosts");
  if (hosts == document.end() || !hosts->is_object()) throw fail("no object 'hosts'");
  if (hosts->size() > kMaxBenchRecordHosts)
    throw fail(fmt::format("{} hosts, more than {}", hosts->size(), kMaxBenchRecordHosts));
  BenchRecord record;
  try {
    for (const auto& [host, value] : hosts->items()) record.hosts.push_back(parse_entry(host, value));
  } catch (const util::InputError& error) {
    throw fail(error.what());
  }
  return record;
}

bool is_node_name(std::string_view text) {
  if (text.empty() || text.size() > 255) return false;
  return std::all_of(text.begin(), text.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ||
           c == '_';
  });
}

}  // namespace dlaunch::slurm
