#include "launch/launch_config.h"

#include <filesystem>
#include <fmt/format.h>
#include <initializer_list>
#include <random>
#include <regex>
#include <sched.h>

#include "process/signal_channel.h"
#include "launch/job_options.h"
#include "launch/launch_site.h"
#include "launch/skypilot_context.h"
#include "launch/token_setting.h"
#include "launch/torchrun_compat.h"
#include "launch/worker_plan.h"
#include "slurm/hostlist.h"
#include "slurm/slurm_context.h"
#include "util/duration_text.h"
#include "util/error.h"
#include "util/signal_names.h"
#include "util/strings.h"

namespace dlaunch::launch {
namespace {

constexpr int kDefaultMasterPort = 29500;
constexpr int kMaxPort = 65535;

template <typename T>
util::Sourced<T> sourced(T value, std::string source) {
  return util::Sourced<T>{std::move(value), std::move(source)};
}

int usable_cpu_count() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return CPU_COUNT(&set);
  return 1;
}

// GPUs visible to this process without loading any GPU library: the
// scheduler's device list if there is one, else the NVIDIA device nodes.
util::Sourced<int> visible_gpu_count(const util::Environment& environment) {
  if (auto list = environment.get("CUDA_VISIBLE_DEVICES"))
    return sourced(slurm::count_device_list(*list), std::string("CUDA_VISIBLE_DEVICES"));
  static const std::regex device_node("nvidia[0-9]+");
  int count = 0;
  std::error_code ignored;
  for (const auto& entry : std::filesystem::directory_iterator("/dev", ignored)) {
    if (std::regex_match(entry.path().filename().string(), device_node)) ++count;
  }
  return sourced(count, std::string("/dev/nvidia*"));
}

std::string random_run_id() {
  std::random_device device;
  return fmt::format("{:08x}-{:04x}", device(), device() & 0xffff);
}

util::Sourced<int> resolve_nnodes(const RunOptions& options, const std::optional<slurm::SlurmContext>& slurm,
                                  const std::optional<SkyPilotContext>& skypilot) {
  if (options.standalone) return sourced(1, std::string("--standalone"));
  if (options.nnodes) {
    // torchrun takes MIN:MAX for elastic jobs; dlaunch runs fixed-size jobs.
    auto parts = util::split(options.nnodes->value, ':');
    if (parts.size() > 2 || (parts.size() == 2 && parts[0] != parts[1]))
      throw util::InputError(fmt::format(
          "{} '{}': elastic node ranges are not supported; give a fixed count such as 2 or 2:2",
          options.nnodes->source, options.nnodes->value));
    int value = static_cast<int>(util::parse_int_in_range(parts[0], 1, 1 << 20, options.nnodes->source));
    return sourced(value, options.nnodes->source);
  }
  if (slurm && slurm->num_nodes) return *slurm->num_nodes;
  if (skypilot) return skypilot->num_nodes;
  return sourced(1, std::string("default"));
}

// Spares are --spare-nodes, or in a Slurm step of more nodes than --nnodes
// the nodes beyond it (dlaunch submit --spare-nodes starts such a step). In
// a step with --spare-nodes but no --nnodes, the rest of the step trains.
util::Sourced<int> resolve_spare_nodes(const RunOptions& options,
                                       const std::optional<slurm::SlurmContext>& slurm,
                                       util::Sourced<int>& nnodes) {
  if (options.standalone) {
    if (options.spare_nodes)
      throw util::InputError(fmt::format("{} cannot be used with --standalone, which runs one node alone",
                                         options.spare_nodes->source));
    return sourced(0, std::string("default"));
  }
  // Only in a step srun started (the batch step runs one launcher, whatever the job's size).
  std::optional<util::Sourced<int>> step_nodes;
  if (slurm && slurm->num_nodes && slurm->step_id) step_nodes = *slurm->num_nodes;
  if (options.spare_nodes) {
    int spares = static_cast<int>(util::parse_int_in_range(options.spare_nodes->value, 0, 1 << 20,
                                                           options.spare_nodes->source));
    if (step_nodes && !options.nnodes) {
      if (spares >= step_nodes->value)
        throw util::InputError(fmt::format(
            "{} {} leaves no node to train in a Slurm step of {} nodes (from {}); give fewer spares",
            options.spare_nodes->source, spares, step_nodes->value, step_nodes->source));
      nnodes = sourced(step_nodes->value - spares,
                       fmt::format("{} {} - {} {}", step_nodes->source, step_nodes->value,
                                   options.spare_nodes->source, spares));
    } else if (step_nodes && step_nodes->value != nnodes.value + spares) {
      throw util::InputError(fmt::format(
          "{} {} and --nnodes {} make {} launchers, but the Slurm step has {} nodes (from {}); give "
          "--nnodes the training nodes and let the step's other nodes be the spares",
          options.spare_nodes->source, spares, nnodes.value, nnodes.value + spares, step_nodes->value,
          step_nodes->source));
    }
    return sourced(spares, options.spare_nodes->source);
  }
  if (step_nodes && options.nnodes && step_nodes->value > nnodes.value)
    return sourced(step_nodes->value - nnodes.value,
                   fmt::format("{} {} - {} {}", step_nodes->source, step_nodes->value,
                               options.nnodes->source, nnodes.value));
  return sourced(0, std::string("default"));
}

util::Sourced<int> resolve_node_rank(const RunOptions& options, const std::optional<slurm::SlurmContext>& slurm,
                                     const std::optional<SkyPilotContext>& skypilot, int nnodes, int spares) {
  util::Sourced<int> rank = sourced(0, std::string("default"));
  if (options.standalone) {
    rank.source = "--standalone";
  } else if (options.node_rank) {
    rank = sourced(static_cast<int>(util::parse_int_in_range(options.node_rank->value, 0, 1 << 20,
                                                       options.node_rank->source)),
                   options.node_rank->source);
  } else if (slurm && slurm->node_id) {
    rank = *slurm->node_id;
  } else if (skypilot) {
    rank = skypilot->node_rank;
  } else if (nnodes + spares > 1 && options.rdzv_backend && options.rdzv_backend->value != "static") {
    // As torchrun's dynamic rendezvous: the same command on every node, ranks by arrival.
    return sourced(-1, fmt::format("the rendezvous, by arrival ({} {} without --node-rank)",
                                   options.rdzv_backend->source, options.rdzv_backend->value));
  }
  if (rank.value >= nnodes + spares)
    throw util::InputError(fmt::format(
        "node rank {} (from {}) is out of range: with {} node(s){} the ranks are 0 to {}", rank.value,
        rank.source, nnodes, spares > 0 ? fmt::format(" and {} spare(s)", spares) : "",
        nnodes + spares - 1));
  return rank;
}

// The GPUs the scheduler gave this node, when it says: Slurm's, else
// SkyPilot's (0 on nodes without GPUs counts as not said).
std::optional<util::Sourced<int>> scheduled_gpus(const std::optional<slurm::SlurmContext>& slurm,
                                                 const std::optional<SkyPilotContext>& skypilot) {
  if (slurm && slurm->gpus_on_node) return slurm->gpus_on_node;
  if (skypilot && skypilot->gpus_per_node && skypilot->gpus_per_node->value > 0) return skypilot->gpus_per_node;
  return std::nullopt;
}

util::Sourced<int> resolve_nproc(const RunOptions& options, const std::optional<slurm::SlurmContext>& slurm,
                                 const std::optional<SkyPilotContext>& skypilot,
                                 const util::Environment& environment) {
  auto scheduled = scheduled_gpus(slurm, skypilot);
  if (options.nproc_per_node) {
    const Setting& setting = *options.nproc_per_node;
    if (setting.value == "cpu") return sourced(usable_cpu_count(), setting.source + "=cpu");
    if (setting.value == "gpu" || setting.value == "auto") {
      auto gpus = scheduled ? *scheduled : visible_gpu_count(environment);
      if (gpus.value > 0) return sourced(gpus.value, setting.source + "=" + setting.value + ", " + gpus.source);
      if (setting.value == "auto") return sourced(usable_cpu_count(), setting.source + "=auto, cpu count");
      throw util::InputError(fmt::format(
          "{}=gpu but no GPU is visible (CUDA_VISIBLE_DEVICES unset or empty, no /dev/nvidia*); "
          "give a number or use 'cpu'",
          setting.source));
    }
    auto value = util::parse_int(setting.value);
    if (!value || *value < 1 || *value > 4096)
      throw util::InputError(fmt::format(
          "{} must be a number from 1 to 4096, 'gpu', 'cpu' or 'auto', got '{}'", setting.source,
          setting.value));
    return sourced(static_cast<int>(*value), setting.source);
  }
  if (scheduled && scheduled->value > 0) return *scheduled;
  return sourced(1, std::string("default"));
}

struct Endpoint {
  std::optional<Setting> host;
  std::optional<util::Sourced<int>> port;
};

std::optional<util::Sourced<int>> parse_port(const Setting& setting) {
  return sourced(static_cast<int>(util::parse_int_in_range(setting.value, 0, kMaxPort, setting.source)),
                 setting.source);
}

// --rdzv-endpoint HOST[:PORT], where HOST may be a bracketed IPv6 address.
Endpoint parse_endpoint(const Setting& setting) {
  const std::string& text = setting.value;
  std::size_t colon = text.rfind(':');
  bool bracketed_v6 = !text.empty() && text.front() == '[';
  if (colon == std::string::npos || (bracketed_v6 && colon < text.find(']')))
    return Endpoint{setting, std::nullopt};
  std::string host = text.substr(0, colon);
  if (bracketed_v6 && host.size() >= 2) host = host.substr(1, host.size() - 2);
  return Endpoint{Setting{host, setting.source},
                  parse_port(Setting{text.substr(colon + 1), setting.source + " port"})};
}

std::pair<int, int> parse_port_range(const std::optional<Setting>& setting) {
  if (!setting) return {kDefaultPortRangeLow, kDefaultPortRangeHigh};
  auto parts = util::split(setting->value, '-');
  if (parts.size() != 2)
    throw util::InputError(fmt::format("{} must look like LOW-HIGH (e.g. 20000-32767), got '{}'",
                                 setting->source, setting->value));
  int low = static_cast<int>(util::parse_int_in_range(parts[0], 1024, kMaxPort, setting->source + " low"));
  int high = static_cast<int>(util::parse_int_in_range(parts[1], low, kMaxPort, setting->source + " high"));
  return {low, high};
}

std::optional<util::Sourced<int>> slurm_port(const slurm::SlurmContext& slurm,
                                       const std::optional<Setting>& port_range) {
  if (slurm.reserved_port)
    return sourced(*slurm.reserved_port, std::string("SLURM_STEP_RESV_PORTS"));
  auto [low, high] = parse_port_range(port_range);
  std::string source = slurm.step_id ? "derived from SLURM_JOB_ID and SLURM_STEP_ID"
                                     : "derived from SLURM_JOB_ID";
  return sourced(derive_slurm_port(slurm.job_id, slurm.step_id, low, high), source);
}

void resolve_address(Topology& topology, const RunOptions& options,
                     const std::optional<slurm::SlurmContext>& slurm,
                     const std::optional<SkyPilotContext>& skypilot) {
  Endpoint endpoint = options.rdzv_endpoint ? parse_endpoint(*options.rdzv_endpoint) : Endpoint{};
  // Checked whether or not they are used here, so that a bad value is
  // found on the first run, not on the first run inside a Slurm step.
  parse_port_range(options.port_range);
  std::optional<util::Sourced<int>> port;
  if (options.master_port) port = parse_port(*options.master_port);
  if (options.standalone) {
    // torchrun --standalone gives workers MASTER_ADDR=localhost and a free port.
    topology.master_addr = sourced(std::string("localhost"), std::string("--standalone"));
    return;
  }
  if (options.master_addr) topology.master_addr = *options.master_addr;
  else if (endpoint.host) topology.master_addr = *endpoint.host;
  else if (auto first = slurm ? slurm::first_node(*slurm) : std::nullopt) topology.master_addr = *first;
  else if (skypilot) topology.master_addr = skypilot->head_ip;
  else topology.master_addr = sourced(std::string("127.0.0.1"), std::string("default"));

  if (port) topology.master_port = port;
  else if (endpoint.port) topology.master_port = endpoint.port;
  else if (slurm) topology.master_port = slurm_port(*slurm, options.port_range);
  else if (topology.nnodes.value > 1)
    topology.master_port = sourced(kDefaultMasterPort, std::string("default"));
  if (topology.master_port && topology.master_port->value == 0) topology.master_port.reset();
}

util::Sourced<std::string> resolve_run_id(const RunOptions& options,
                                    const std::optional<slurm::SlurmContext>& slurm) {
  if (options.rdzv_id) return *options.rdzv_id;
  if (options.standalone) return sourced(random_run_id(), std::string("--standalone (random)"));
  if (slurm) {
    std::string id = slurm->job_id;
    if (slurm->step_id) id += "." + std::to_string(*slurm->step_id);
    return sourced(id, std::string("SLURM_JOB_ID"));
  }
  return sourced(std::string("none"), std::string("default"));
}

// Where each slot's launcher runs when Slurm places them: one per node of
// the step, in SLURM_NODEID order. Empty when the slots are not Slurm's
// (--node-rank) or the list does not fit the launchers.
std::vector<std::string> slurm_hosts(const RunOptions& options, const std::optional<slurm::SlurmContext>& slurm,
                                     const Topology& topology) {
  if (!slurm || !slurm->nodelist || !slurm->node_id || options.node_rank || options.standalone ||
      topology.launchers() == 1)
    return {};
  const auto launchers = static_cast<std::size_t>(topology.launchers());
  std::vector<std::string> hosts;
  std::size_t listed = 0;
  try {
    // Counted, not held, past the launchers: a huge list costs no memory.
    slurm::for_each_host(slurm->nodelist->value, [&](std::string_view host) {
      if (++listed <= launchers) hosts.emplace_back(host);
    });
  } catch (const util::InputError&) {
    return {};  // the master address's resolution reports a bad list
  }
  if (listed != launchers) return {};
  return hosts;
}

// Each value comes from the first that gives it: a flag, its PET_*
// variable, a Slurm step srun started, SkyPilot's variables, Slurm outside
// a step (the batch script of a one-node job), torchrun's default. Then the
// place itself is checked (launch/launch_site.h): a place where the job
// cannot form is refused before anything waits.
Topology resolve_topology(const RunOptions& options, const util::Environment& environment) {
  auto slurm = slurm::read_slurm_context(environment);
  auto skypilot = skypilot_placement(environment, slurm);
  if (skypilot) slurm.reset();  // outside any srun step: SkyPilot places this launcher
  Topology topology;
  topology.in_slurm = slurm.has_value();
  topology.in_skypilot = skypilot.has_value();
  topology.nnodes = resolve_nnodes(options, slurm, skypilot);
  topology.spare_nodes = resolve_spare_nodes(options, slurm, topology.nnodes);
  topology.node_rank =
      resolve_node_rank(options, slurm, skypilot, topology.nnodes.value, topology.spare_nodes.value);
  topology.nproc_per_node = resolve_nproc(options, slurm, skypilot, environment);
  resolve_address(topology, options, slurm, skypilot);
  topology.run_id = resolve_run_id(options, slurm);
  topology.expected_hosts = slurm_hosts(options, slurm, topology);
  check_launch_site(options, topology, environment);
  return topology;
}

std::optional<Setting> join_timeout_from_conf(const std::optional<Setting>& conf) {
  if (!conf) return std::nullopt;
  for (const auto& pair : util::split(conf->value, ',')) {
    auto equals = pair.find('=');
    if (equals != std::string::npos && util::trim(pair.substr(0, equals)) == "join_timeout")
      return Setting{std::string(util::trim(pair.substr(equals + 1))), conf->source + " join_timeout"};
  }
  return std::nullopt;
}

// The local ranks SETTING lists, each one this node runs (NPROC workers):
// a filter that names none of them would hide every line without a word.
std::vector<int> parse_rank_list(const Setting& setting, const util::Sourced<int>& nproc) {
  std::vector<int> ranks;
  for (const auto& item : util::split(setting.value, ',')) {
    auto rank = static_cast<int>(util::parse_int_in_range(item, 0, 1 << 20, setting.source));
    if (rank >= nproc.value)
      throw util::InputError(fmt::format(
          "{} '{}' names local rank {}, but this node runs {} worker{} (local ranks 0-{}, from {}); give "
          "local ranks of this node",
          setting.source, setting.value, rank, nproc.value, nproc.value == 1 ? "" : "s", nproc.value - 1,
          nproc.source));
    ranks.push_back(rank);
  }
  return ranks;
}

// Only signals that do not already mean "stop the job" can warn of a
// preemption: the workers must live on to checkpoint.
int parse_preempt_signal(const Setting& setting) {
  auto signal = util::signal_number(setting.value);
  if (!signal || (*signal != SIGUSR1 && *signal != SIGUSR2))
    throw util::InputError(fmt::format(
        "{} must be USR1 or USR2 (the signal Slurm sends before the time limit with sbatch "
        "--signal), got '{}'; SIGTERM and SIGINT already stop the job",
        setting.source, setting.value));
  return *signal;
}

// The one of CHOICES that SETTING names (NAME_OF gives each its word).
// Throws InputError "SETTING must be MEANINGS, got 'VALUE'", where MEANINGS
// says what each word does.
template <typename Choice>
util::Sourced<Choice> parse_choice(const Setting& setting, std::initializer_list<Choice> choices,
                                   const char* (*name_of)(Choice), std::string_view meanings) {
  for (Choice choice : choices) {
    if (setting.value == name_of(choice)) return sourced(choice, setting.source);
  }
  throw util::InputError(fmt::format("{} must be {}, got '{}'", setting.source, meanings, setting.value));
}

util::Sourced<KillEscaped> parse_kill_escaped(const Setting& setting) {
  return parse_choice(setting, {KillEscaped::kSubreaper, KillEscaped::kCgroup, KillEscaped::kOff},
                      &kill_escaped_name,
                      "subreaper (the default: kill the workers' orphans, such as setsid daemons, at the end of "
                      "each round), cgroup (track every worker process in a cgroup v2) or off");
}

util::Sourced<util::ConsoleOverflow> parse_console_overflow(const Setting& setting) {
  return parse_choice(setting, {util::ConsoleOverflow::kBlock, util::ConsoleOverflow::kDrop},
                      &console_overflow_name,
                      "block (the default: when the console is slower than the workers, their writes wait and "
                      "nothing is lost) or drop (whole lines are dropped and counted, the workers never wait)");
}

void resolve_replacement(LaunchConfig& config, const RunOptions& options) {
  if (options.exit_code_file) {
    if (options.exit_code_file->value.empty())
      throw util::InputError(fmt::format("{} must name a file, got an empty value", options.exit_code_file->source));
    config.exit_code_file = options.exit_code_file->value;
  }
  if (options.end_job_after) config.end_job_after = parse_seconds(*options.end_job_after);
  if (options.bench_record) {
    if (options.bench_record->value.empty())
      throw util::InputError(fmt::format("{} must name a file, got an empty value", options.bench_record->source));
    config.bench_record = options.bench_record->value;
  }
  if (options.bench_cooldown)
    config.bench_cooldown_s = util::parse_duration_text(options.bench_cooldown->value, options.bench_cooldown->source,
                                                        1, slurm::kMaxBenchCooldown);
}

// What the job options (launch/job_options.h) cannot check alone, as
// they need another option or the topology.
// --startup-timeout lengthens --hang-timeout's first phase: without a hang
// timeout, or shorter than it, it would change nothing.
void check_startup_timeout(const rendezvous::HangSettings& hang, const std::map<std::string, Setting>& given) {
  auto startup = given.find("startup-timeout");
  if (startup == given.end()) return;
  auto seconds = [](auto duration) { return std::chrono::duration_cast<std::chrono::seconds>(duration).count(); };
  if (hang.hang_timeout.count() <= 0)
    throw util::UsageError(fmt::format("{} needs --hang-timeout: it lengthens the hang timeout until the "
                                       "first step, and without one the job is never judged hung",
                                       startup->second.source));
  if (hang.startup_timeout <= hang.hang_timeout)
    throw util::UsageError(fmt::format("{} {} must be longer than --hang-timeout {}: the start-up phase may "
                                       "only take longer; give more seconds, or drop it",
                                       startup->second.source, seconds(hang.startup_timeout),
                                       seconds(hang.hang_timeout)));
}

// Options that only act on a restart, or with another option, would change
// nothing without it: said now rather than found out after a failed run.
// Not --spare-nodes with --max-restarts 0: a spare takes the place of a
// launcher that has not joined when round 0 starts, and of a node the gate
// benches, without a restart (docs/RELIABILITY.md, "Spare nodes").
void check_options_in_use(const LaunchConfig& config, const std::map<std::string, Setting>& given) {
  auto source_of = [&](const char* name) { return given.find(name)->second.source; };
  if (given.contains("health-check-timeout") && !given.contains("health-check"))
    throw util::UsageError(fmt::format("{} needs --health-check: it bounds the check's command, and none is given. "
                                       "Give --health-check CMD, or drop it",
                                       source_of("health-check-timeout")));
  if (config.job.max_restarts > 0) return;
  const char* restart = given.contains("max-restarts")
                            ? "--max-restarts is 0"
                            : "--max-restarts is 0 (its default)";
  if (given.contains("health-check"))
    throw util::UsageError(fmt::format("{} runs before each restart, but {}: it would never run. Give "
                                       "--max-restarts N, or drop it",
                                       source_of("health-check"), restart));
  if (given.contains("retry-repeated-failures"))
    throw util::UsageError(fmt::format("{} spends restarts on a repeated failure, but {}: there are none to "
                                       "spend. Give --max-restarts N, or drop it",
                                       source_of("retry-repeated-failures"), restart));
}

void check_job_options(const LaunchConfig& config, const RunOptions& options) {
  auto given = [&](const char* name) { return options.job.find(name); };
  if (auto min_nodes = given("min-nodes"); min_nodes != options.job.end() && config.job.min_nodes > config.job.nnodes)
    throw util::InputError(fmt::format("{} must be from 1 to --nnodes ({}), got {}", min_nodes->second.source,
                                       config.job.nnodes, min_nodes->second.value));
  if (given("gate-timeout") != options.job.end() && !config.job.gate.enabled)
    throw util::UsageError("--gate-timeout needs --gate");
  check_startup_timeout(config.job.forensics.hang, options.job);
  check_options_in_use(config, options.job);
}

// The job's shared settings: the job options as given, then the
// topology's sizes, the run id and the token.
void resolve_job_settings(LaunchConfig& config, const RunOptions& options) {
  rendezvous::JobSettings& job = config.job;
  const Topology& topology = config.topology;
  job.nnodes = topology.nnodes.value;
  job.spare_nodes = topology.spare_nodes.value;
  job.run_id = topology.run_id.value;
  job.expected_hosts = topology.expected_hosts;
  if (auto timeout = join_timeout_from_conf(options.rdzv_conf); timeout && !options.job.contains("rdzv-timeout"))
    job.join_timeout = parse_seconds(*timeout);
  apply_job_options(options.job, job);
  check_job_options(config, options);
  if (job.min_nodes == 0) job.min_nodes = job.nnodes;
  if (config.rdzv_token) job.token = config.rdzv_token->value;
}

void resolve_reliability(LaunchConfig& config, const RunOptions& options,
                         const util::Environment& environment, HostLookups lookups) {
  // A --rdzv-token-file is read on the node that runs: checked elsewhere,
  // it may not exist here, or hold another secret.
  RunOptions token_options = options;
  if (lookups == HostLookups::kElsewhere && token_options.rdzv_token_file) {
    if (token_options.rdzv_token && token_options.rdzv_token_file)
      throw util::UsageError("give --rdzv-token or --rdzv-token-file, not both");
    token_options.rdzv_token_file.reset();
  }
  config.rdzv_token = resolve_rdzv_token(token_options, environment, config.topology);
  if (options.preempt_signal) config.preempt_signal = parse_preempt_signal(*options.preempt_signal);
  config.requeue = options.requeue;
  if (config.requeue && config.preempt_signal == 0)
    throw util::UsageError("--requeue needs --preempt-signal (e.g. --preempt-signal USR1): the requeue "
                     "follows the signal that warns of the preemption");
  if (config.requeue && !environment.get("SLURM_JOB_ID"))
    throw util::InputError("--requeue needs a Slurm batch job (SLURM_JOB_ID is unset)");
  config.allow_uneven = options.allow_uneven;
  config.stop_on_stdin_close = options.stop_on_stdin_close;
  if (options.kill_escaped) config.kill_escaped = parse_kill_escaped(*options.kill_escaped);
  if (options.console_overflow) config.console_overflow = parse_console_overflow(*options.console_overflow);
  config.log_dir_required = options.log_dir_required;
  resolve_replacement(config, options);
  resolve_job_settings(config, options);
}

}  // namespace

// Whether dlaunch puts a Python interpreter in front of OPTIONS' program.
static bool runs_under_python(const RunOptions& options) {
  if (options.no_python && options.module)
    throw util::InputError("--no-python and --module cannot be used together: a module needs Python");
  if (options.command.empty() || options.no_python) return false;
  const std::string& program = options.command.front();
  bool python_file = program.size() > 3 && program.ends_with(".py");
  return options.module || options.run_path || python_file;
}

// OPTIONS' program as the workers run it: under PYTHON when it has one.
static std::vector<std::string> command_under(const RunOptions& options, const std::optional<WorkerPython>& python) {
  if (!python) return options.command;
  std::vector<std::string> command{python->name, "-u"};
  if (options.module) command.push_back("-m");
  command.insert(command.end(), options.command.begin(), options.command.end());
  return command;
}

std::vector<std::string> worker_command(const RunOptions& options, const util::Environment& environment) {
  if (!runs_under_python(options)) return options.command;
  return command_under(options, choose_worker_python(options, environment));
}

const char* console_overflow_name(util::ConsoleOverflow overflow) {
  return overflow == util::ConsoleOverflow::kDrop ? "drop" : "block";
}

const char* kill_escaped_name(KillEscaped mode) {
  switch (mode) {
    case KillEscaped::kOff: return "off";
    case KillEscaped::kSubreaper: return "subreaper";
    case KillEscaped::kCgroup: return "cgroup";
  }
  return "off";
}

unsigned StreamRouting::mask_for(int local_rank) const {
  auto found = per_rank.find(local_rank);
  return found == per_rank.end() ? default_mask : found->second;
}

int derive_slurm_port(const std::string& job_id, std::optional<std::uint64_t> step_id, int low,
                      int high) {
  // Job ids are consecutive integers (array jobs "123_4" hash the same way),
  // so spacing jobs 8 ports apart and steps one apart keeps neighbours
  // distinct; the bind check at start-up catches what remains.
  std::uint64_t job = 0;
  for (char c : job_id) job = job * 31 + static_cast<unsigned char>(c);
  if (auto numeric = util::parse_int(job_id)) job = static_cast<std::uint64_t>(*numeric);
  std::uint64_t slot = job * 8 + (step_id ? *step_id % 8 : 0);
  auto size = static_cast<std::uint64_t>(high - low + 1);
  return low + static_cast<int>(slot % size);
}

StreamRouting parse_stream_routing(const Setting& setting) {
  auto mask = [&](std::string_view text) {
    return static_cast<unsigned>(util::parse_int_in_range(text, 0, 3, setting.source + " stream (0-3)"));
  };
  StreamRouting routing;
  if (setting.value.find(':') == std::string::npos) {
    routing.default_mask = mask(setting.value);
    return routing;
  }
  for (const auto& pair : util::split(setting.value, ',')) {
    auto parts = util::split(pair, ':');
    if (parts.size() != 2)
      throw util::InputError(fmt::format("{} must be 0-3 or LOCAL_RANK:0-3,..., got '{}'",
                                   setting.source, setting.value));
    routing.per_rank[static_cast<int>(util::parse_int_in_range(parts[0], 0, 1 << 20, setting.source))] =
        mask(parts[1]);
  }
  return routing;
}

LaunchConfig resolve_launch_config(const RunOptions& options, const util::Environment& environment,
                                   HostLookups lookups) {
  check_torchrun_options(options);
  LaunchConfig config;
  config.topology = resolve_topology(options, environment);
  for (auto& notice : torchrun_ignored_notices(options)) config.topology.notices.push_back(std::move(notice));
  // The interpreter is looked up in PATH once, for the argv and for what is
  // said of it; only in the node's own PATH (HostLookups).
  if (runs_under_python(options))
    config.python = lookups == HostLookups::kThisNode ? choose_worker_python(options, environment)
                                                      : name_worker_python(options, environment);
  config.command = command_under(options, config.python);
  if (options.role) config.role = options.role->value;
  if (options.shutdown_timeout) config.shutdown_timeout = parse_seconds(*options.shutdown_timeout);
  if (options.log_dir) config.log_dir = options.log_dir->value;
  if (options.redirects) config.redirects = parse_stream_routing(*options.redirects);
  if (options.tee) config.tee = parse_stream_routing(*options.tee);
  if (options.local_ranks_filter)
    config.local_ranks_filter = parse_rank_list(*options.local_ranks_filter, config.topology.nproc_per_node);
  if (options.prefix) config.prefix_template = options.prefix->value;
  if (options.log_line_prefix_template)
    config.prefix_template = prefix_from_torchrun_template(*options.log_line_prefix_template);
  // The workers' prefixes are made from the template once a round starts:
  // one fmt cannot read is refused now, in expand_prefix's own words.
  (void)expand_prefix(config.prefix_template, 0, 0, 0, "host", config.role);
  resolve_reliability(config, options, environment, lookups);
  return config;
}

}  // namespace dlaunch::launch
