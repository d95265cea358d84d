#include "launch/job_options.h"

#include <algorithm>
#include <fmt/format.h>

#include "util/error.h"
#include "util/strings.h"
#include "wire/world.h"

namespace dlaunch::launch {

std::chrono::milliseconds parse_seconds(const Setting& setting, std::int64_t minimum) {
  constexpr std::int64_t kWeek = 7 * 24 * 3600;
  auto seconds = util::parse_int_in_range(setting.value, 0, kWeek, setting.source + " (seconds)");
  if (seconds < minimum)
    throw util::InputError(
        fmt::format("{} must be at least {} second{}, got {}", setting.source, minimum, minimum == 1 ? "" : "s", seconds));
  return std::chrono::seconds(seconds);
}

namespace {

using rendezvous::JobSettings;
using namespace option_group;

int parse_count(const Setting& setting, int low) {
  return static_cast<int>(util::parse_int_in_range(setting.value, low, 1'000'000, setting.source));
}

std::string seconds_of(std::chrono::milliseconds duration) {
  return std::to_string(std::chrono::duration_cast<std::chrono::seconds>(duration).count());
}

// Captureless lambdas, so each row reads as one declaration: the
// option's words, where its value goes, and how it is shown.
constexpr JobOption kJobOptions[] = {
    {"max-restarts", kReliability, "N", "Restart the whole job up to N times after a failure (default 0)",
     [](JobSettings& job, const Setting& value) { job.max_restarts = parse_count(value, 0); },
     [](const JobSettings& job) { return std::to_string(job.max_restarts); }},
    {"retry-repeated-failures", kReliability, nullptr,
     "Spend every restart even on a failure that repeats the previous attempt's (the same exception "
     "at the same line, no further along): by default the job stops after the second time with exit "
     "code 3, which a requeue should not retry",
     [](JobSettings& job, const Setting&) { job.stop_repeated_failures = false; },
     [](const JobSettings& job) { return std::string(job.stop_repeated_failures ? "false" : "true"); }},
    {"heartbeat-timeout", kReliability, "SECONDS",
     "Seconds of silence after which a node counts as lost and the job stops (default 30)",
     [](JobSettings& job, const Setting& value) { job.heartbeat_timeout = parse_seconds(value, 1); },
     [](const JobSettings& job) { return seconds_of(job.heartbeat_timeout); }},
    {"min-nodes", kReliability, "N",
     "Once no spare is left, go on after a lost node with fewer nodes, down to this many (default: "
     "--nnodes, so the job ends)",
     // At most --nnodes: launch_config checks, as only it knows the training size.
     [](JobSettings& job, const Setting& value) { job.min_nodes = parse_count(value, 1); },
     [](const JobSettings& job) { return std::to_string(rendezvous::effective_min_nodes(job.min_nodes, job.nnodes)); }},
    {"node-fail-limit", kReliability, "N",
     "Bench a node whose workers fail first this many rounds in a row, when a spare can take its "
     "place (default 2; 0: never)",
     [](JobSettings& job, const Setting& value) { job.node_fail_limit = parse_count(value, 0); },
     [](const JobSettings& job) { return std::to_string(job.node_fail_limit); }},
    {"gate", kReliability, nullptr,
     "Before the first attempt, check every node (spares too): a verified all-reduce, then the "
     "bandwidth of node pairs; bench nodes that fail, do not arrive or run under half the median "
     "link, and start on the healthy ones",
     [](JobSettings& job, const Setting&) { job.gate.enabled = true; },
     [](const JobSettings& job) { return std::string(job.gate.enabled ? "true" : "false"); }},
    {"gate-timeout", kReliability, "SECONDS",
     "With --gate: seconds the launchers may take to arrive, and then the gate's check (default 60)",
     [](JobSettings& job, const Setting& value) { job.gate.timeout = parse_seconds(value, 1); },
     [](const JobSettings& job) { return seconds_of(job.gate.timeout); }},
    {"rdzv-timeout", kRendezvous, "SECONDS", "Seconds to wait for every node to join (default 300)",
     [](JobSettings& job, const Setting& value) { job.join_timeout = parse_seconds(value); },
     [](const JobSettings& job) { return seconds_of(job.join_timeout); }},
    {"hang-timeout", kHangs, "SECONDS",
     "Seconds without progress on any rank (output, or a new step on $DLAUNCH_PROGRESS_FD) after "
     "which the job is hung: every worker's stack is captured and reported, then the job stops "
     "(exit code 124) (default 0: never)",
     [](JobSettings& job, const Setting& value) { job.forensics.hang.hang_timeout = parse_seconds(value); },
     [](const JobSettings& job) { return seconds_of(job.forensics.hang.hang_timeout); }},
    {"startup-timeout", kHangs, "SECONDS",
     "Until any rank reports its first step on $DLAUNCH_PROGRESS_FD, the job is not hung before this "
     "many seconds after its start: a slow start (imports, loading, compiling) on a loaded node does "
     "not trip a short --hang-timeout (needs --hang-timeout, and must be longer; default 0: "
     "--hang-timeout from the start)",
     [](JobSettings& job, const Setting& value) { job.forensics.hang.startup_timeout = parse_seconds(value); },
     [](const JobSettings& job) { return seconds_of(job.forensics.hang.startup_timeout); }},
    {"straggler-lag", kHangs, "STEPS",
     "Name a rank as a straggler while it is more than this many steps behind the median step "
     "(needs steps on $DLAUNCH_PROGRESS_FD; default 0: off)",
     [](JobSettings& job, const Setting& value) {
       job.forensics.hang.straggler_lag =
           util::parse_int_in_range(value.value, 0, 1'000'000'000'000LL, value.source + " (steps)");
     },
     [](const JobSettings& job) { return std::to_string(job.forensics.hang.straggler_lag); }},
    {"stack-timeout", kHangs, "SECONDS",
     "Seconds each stack tool (eu-stack, gdb) may take per worker in a capture (default 5)",
     [](JobSettings& job, const Setting& value) { job.forensics.capture_timeout = parse_seconds(value, 1); },
     [](const JobSettings& job) { return seconds_of(job.forensics.capture_timeout); }},
    {"health-check", kReliability, "CMD",
     "Before each restart, every node runs CMD (by /bin/sh -c, stdin /dev/null) beside dlaunch's own "
     "checks (log disk room, no worker left, GPU memory freed); a node whose check fails is benched for "
     "a spare, or the job stops naming it",
     [](JobSettings& job, const Setting& value) { job.health_check = value.value; },
     [](const JobSettings& job) { return job.health_check.value_or(""); }},
    {"health-check-timeout", kReliability, "SECONDS",
     "Seconds --health-check may run before it is killed with its process group and fails (default 60)",
     [](JobSettings& job, const Setting& value) { job.health_check_timeout = parse_seconds(value, 1); },
     [](const JobSettings& job) { return seconds_of(job.health_check_timeout); }},
};

}  // namespace

std::span<const JobOption> job_options() { return kJobOptions; }

const JobOption* find_job_option(std::string_view name) {
  auto found = std::find_if(std::begin(kJobOptions), std::end(kJobOptions),
                            [name](const JobOption& option) { return name == option.name; });
  return found == std::end(kJobOptions) ? nullptr : found;
}

void apply_job_options(const std::map<std::string, Setting>& given, rendezvous::JobSettings& job) {
  for (const auto& option : kJobOptions) {
    if (auto value = given.find(option.name); value != given.end()) option.apply(job, value->second);
  }
}

}  // namespace dlaunch::launch
