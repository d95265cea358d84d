#include "launch/requeue_exclusion.h"

#include <ctime>
#include <fmt/format.h>

#include "slurm/hostlist.h"
#include "slurm/job_query.h"
#include "slurm/requeue.h"
#include "util/atomic_file.h"
#include "util/duration_text.h"
#include "util/error.h"
#include "util/outside_file.h"
#include "util/strings.h"

namespace dlaunch::launch {
namespace {

// The text after MARKER in LINE, or nullopt without MARKER.
std::optional<std::string> after(const std::string& line, const std::string& marker) {
  auto at = line.find(marker);
  if (at == std::string::npos) return std::nullopt;
  return line.substr(at + marker.size());
}

// "failed 3 rounds in a row (--node-fail-limit 3)" from LINE, an event that
// names the node by its role and host: "node 1 (HOST) failed 3 rounds in a
// row (--node-fail-limit 3): it is benched", "node 1 (HOST) was lost 2 times
// in this job; it is benched ...". The launcher's HOST may be the Slurm
// node name's long form (node1.cluster for node1).
std::optional<std::string> benched_by_role(const std::string& line, const std::string& host) {
  auto end = line.find("it is benched");
  if (end == std::string::npos || !util::starts_with(line, "node ")) return std::nullopt;
  auto at = line.find(" (" + host);
  if (at == std::string::npos || at > end) return std::nullopt;
  auto close = line.find(") ", at);
  const char next = line[at + 2 + host.size()];
  if (close == std::string::npos || close > end || (next != ')' && next != '.')) return std::nullopt;
  std::string why = line.substr(close + 2, end - close - 2);
  while (!why.empty() && (why.back() == ' ' || why.back() == ':' || why.back() == ';')) why.pop_back();
  return why;
}

// The record at PATH; an empty one when there is none. A record that cannot
// be read or used is said and replaced by a new one: the requeue matters
// more than what earlier runs benched.
slurm::BenchRecord load_record(const std::string& path, const std::function<void(const std::string&)>& say) {
  try {
    auto text = util::read_outside_file(path, {"dlaunch's record of benched hosts (--bench-record)",
                                               slurm::kMaxBenchRecordBytes, util::Links::kRefuse});
    if (!text) return {};
    return slurm::parse_bench_record(*text, path);
  } catch (const std::runtime_error& error) {
    say(fmt::format("dlaunch: {}; starting a new one, so hosts benched by earlier runs are not excluded "
                    "(remove the file, or fix it, to silence this)",
                    error.what()));
    return {};
  }
}

// The job's ExcNodeList as Slurm has it, expanded; nullopt (said) when it
// cannot be read: an update would then drop the user's own exclusions.
std::optional<std::vector<std::string>> current_exclusion(const std::string& job_id,
                                                          const std::function<void(const std::string&)>& say) {
  try {
    auto records = slurm::show_job(job_id);
    if (records.empty()) throw util::SystemError(fmt::format("Slurm does not know job {}", job_id));
    std::string list = records.front().field("ExcNodeList");
    if (list.empty() || list == "(null)") return std::vector<std::string>{};
    return slurm::expand_hostlist(list);
  } catch (const std::runtime_error& error) {
    say(fmt::format("dlaunch: cannot read job {}'s excluded nodes (scontrol show job): {}; the requeued job "
                    "is left as it is and may run on the hosts dlaunch benched",
                    job_id, error.what()));
    return std::nullopt;
  }
}

std::string local_clock(std::int64_t when, std::int64_t now) {
  std::time_t at = when, today = now;
  std::tm at_tm{}, now_tm{};
  ::localtime_r(&at, &at_tm);
  ::localtime_r(&today, &now_tm);
  const bool same_day = at_tm.tm_year == now_tm.tm_year && at_tm.tm_yday == now_tm.tm_yday;
  char text[32];
  std::strftime(text, sizeof text, same_day ? "%H:%M" : "%Y-%m-%d %H:%M", &at_tm);
  return text;
}

}  // namespace

std::string bench_reason(const std::vector<std::string>& timeline, int slot, const std::string& host) {
  const std::string benched = fmt::format(" (slot {}) benched: ", slot);
  for (auto line = timeline.rbegin(); line != timeline.rend(); ++line) {
    if (auto why = after(*line, benched)) {
      // The check's own words start "health check 'NAME' failed on HOST".
      if (util::starts_with(*line, "health check:"))
        return util::starts_with(*why, "health check") ? *why : "health check failed: " + *why;
      if (util::starts_with(*line, "gate:")) return "pre-start gate: " + *why;
      return *why;
    }
    if (auto why = benched_by_role(*line, host)) return *why;
  }
  return "benched (node 0's timeline says why)";
}

std::vector<slurm::BenchedHost> benched_hosts(const rendezvous::World& world,
                                              const std::vector<std::string>& timeline,
                                              const std::vector<std::string>& slot_hosts) {
  std::vector<slurm::BenchedHost> hosts;
  for (int slot : world.benched_slots) {
    if (slot < 0 || static_cast<std::size_t>(slot) >= slot_hosts.size()) continue;
    const std::string& host = slot_hosts[static_cast<std::size_t>(slot)];
    hosts.push_back({host, bench_reason(timeline, slot, host)});
  }
  return hosts;
}

std::string describe_exclusion(const slurm::BenchEntry& entry, std::int64_t now) {
  return fmt::format("{} (benched: {}; excluded until {}, cooldown {})", entry.host, entry.why,
                     local_clock(entry.excluded_until, now),
                     util::format_duration_text(entry.excluded_until - entry.last_benched));
}

void requeue_excluding_benched(const RequeueRequest& request, const std::function<void(const std::string&)>& say) {
  const std::string requeueing =
      fmt::format("dlaunch: the workers exited after the preemption signal; requeueing job {}", request.job_id);
  if (!request.record_path) {
    say(requeueing);
    slurm::requeue_job(request.job_id);
    return;
  }
  const std::string& path = *request.record_path;
  slurm::BenchRecord record = load_record(path, say);
  slurm::merge_benched(record, request.benched, request.now, request.cooldown_s);
  const auto current = current_exclusion(request.job_id, say);
  std::vector<std::string> without;
  if (current) {
    for (const auto& entry : slurm::in_cooldown(record, request.now))
      without.push_back(describe_exclusion(entry, request.now));
  }
  say(without.empty() ? requeueing : requeueing + " without " + util::join(without, ", "));

  auto save = [&] {
    try {
      util::write_file_atomically(path, slurm::bench_record_json(record));
    } catch (const std::runtime_error& error) {
      say(fmt::format("dlaunch: cannot write the record of benched hosts {} (--bench-record): {}; the next "
                      "requeue will not know which hosts this run benched",
                      path, error.what()));
    }
  };
  try {
    slurm::requeue_job(request.job_id);
  } catch (...) {
    save();
    throw;
  }
  // Only now: Slurm refuses ExcNodeList for a running job.
  if (current) {
    slurm::Exclusion exclusion = slurm::plan_exclusion(record, *current, request.now);
    if (exclusion.changed()) {
      try {
        slurm::exclude_nodes(request.job_id, exclusion.hosts);
        slurm::note_exclusion(record, exclusion);
        for (const auto& host : exclusion.released)
          say(fmt::format("dlaunch: {}'s cooldown is over: the requeued job may run on it again", host));
      } catch (const std::runtime_error& error) {
        say(fmt::format("dlaunch: job {} is requeued, but without its exclusions: {}. To keep the benched "
                        "hosts out, run while it is pending: scontrol update JobId={} ExcNodeList={}",
                        request.job_id, error.what(), request.job_id, slurm::compress_hostlist(exclusion.hosts)));
      }
    }
  }
  save();
}

}  // namespace dlaunch::launch
