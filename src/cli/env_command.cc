#include "cli/env_command.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/command_parser.h"
#include "launch/job_options.h"
#include "launch/run_options.h"
#include "launch/launch_config.h"
#include "net/interfaces.h"
#include "util/command_line.h"
#include "util/error.h"
#include "util/ports.h"
#include "util/signal_names.h"
#include "util/strings.h"

namespace dlaunch::cli {
namespace {

struct Row {
  std::string key;
  std::string label;
  nlohmann::json value;
  std::string source;
};

std::vector<Row> topology_rows(const launch::Topology& topology) {
  const bool several_nodes = topology.launchers() > 1;
  const bool spares = topology.spare_nodes.value > 0;
  std::vector<Row> rows = {
      {"nnodes", "nodes", topology.nnodes.value, topology.nnodes.source},
      {"spare_nodes", "spare nodes", topology.spare_nodes.value, topology.spare_nodes.source},
      {"node_rank", spares ? "launcher slot" : "node rank",
       topology.rank_by_arrival() ? nlohmann::json(nullptr) : nlohmann::json(topology.node_rank.value),
       topology.node_rank.source},
      {"nproc_per_node", "workers on this node", topology.nproc_per_node.value,
       topology.nproc_per_node.source},
      {"master_addr", "master address", topology.master_addr.value, topology.master_addr.source},
  };
  if (topology.master_port) {
    rows.push_back({"master_port", several_nodes ? "rendezvous port" : "workers' MASTER_PORT",
                    topology.master_port->value, topology.master_port->source});
  } else {
    rows.push_back({"master_port", "workers' MASTER_PORT", nullptr, "a free port, picked at start"});
  }
  if (spares && !topology.rank_by_arrival())
    rows.push_back({"role", "role", topology.node_rank.value < topology.nnodes.value ? "training node" : "spare",
                    fmt::format("slots 0-{} train first; the rest stand by; node ranks are given at each "
                                "rendezvous round",
                                topology.nnodes.value - 1)});
  rows.push_back({"run_id", "run id", topology.run_id.value, topology.run_id.source});
  rows.push_back({"rendezvous", "rendezvous",
                  !several_nodes                ? "none (single node)"
                  : topology.rank_by_arrival() ? fmt::format("on {}'s host; node ranks by arrival",
                                                              topology.master_addr.value)
                                                : std::string("hosted by node 0"),
                  !several_nodes               ? "nnodes = 1"
                  : topology.rank_by_arrival() ? "the first launcher there to bind the port serves it as node 0; "
                                                 "the others get node ranks as they join"
                  : spares       ? "workers start once nnodes launchers joined; the others stand by"
                                 : "nnodes > 1: workers start once every node joined"});
  rows.push_back({"in_slurm", "inside a Slurm step", topology.in_slurm,
                  topology.in_slurm ? "SLURM_JOB_ID and SLURM_NODEID" : "SLURM_JOB_ID unset"});
  if (topology.in_skypilot)
    rows.push_back({"in_skypilot", "placed by SkyPilot", true,
                    "SKYPILOT_NODE_IPS, SKYPILOT_NODE_RANK and SKYPILOT_NUM_NODES, outside any srun step"});
  return rows;
}

// What protects and watches the job; the token's value is never shown.
std::vector<Row> reliability_rows(const launch::LaunchConfig& config) {
  if (config.topology.launchers() == 1) return {};
  std::vector<Row> rows;
  if (config.rdzv_token)
    rows.push_back({"rdzv_token", "rendezvous token", "set (not shown)", config.rdzv_token->source});
  else
    rows.push_back({"rdzv_token", "rendezvous token", nullptr,
                    "none: any launcher that reaches node 0's port may join; set "
                    "$DLAUNCH_RDZV_TOKEN or --rdzv-token-file"});
  if (config.preempt_signal != 0)
    rows.push_back({"preempt_signal", "preemption signal", util::signal_name(config.preempt_signal),
                    config.requeue ? "forwarded; node 0 then requeues the job" : "forwarded to the workers"});
  return rows;
}

// A job option's value as JSON: a number or a flag where it is one.
nlohmann::json job_option_value(const launch::JobOption& option, const std::string& shown) {
  if (option.is_flag()) return shown == "true";
  if (auto number = util::parse_int(shown)) return *number;
  return shown;
}

// The job options (launch/job_options.h): for a job of several nodes all
// of them, as node 0's service will hold them; for one node those given.
std::vector<Row> job_option_rows(const launch::LaunchConfig& config, const launch::RunOptions& options) {
  const bool several_nodes = config.topology.launchers() > 1;
  std::vector<Row> rows;
  for (const auto& option : launch::job_options()) {
    auto given = options.job.find(option.name);
    if (!several_nodes && given == options.job.end()) continue;
    std::string key = option.name;
    std::replace(key.begin(), key.end(), '-', '_');
    std::string label = option.name;
    std::replace(label.begin(), label.end(), '-', ' ');
    if (option.placeholder && std::string_view(option.placeholder) == "SECONDS") label += " (s)";
    std::string source = given != options.job.end() ? given->second.source : "default";
    if (several_nodes) source += "; node 0's value holds for every node";
    rows.push_back({key, label, job_option_value(option, option.show(config.job)), source});
  }
  return rows;
}

// How the workers are supervised beyond the topology.
std::vector<Row> supervision_rows(const launch::LaunchConfig& config) {
  static const char* const kCatches[] = {
      "processes that leave a worker's group are not caught",
      "the workers' orphans (setsid daemons) are killed after each round",
      "every worker process is tracked in a cgroup v2 and killed after each round",
  };
  const util::Sourced<launch::KillEscaped>& mode = config.kill_escaped;
  std::string source = mode.source + ": " + kCatches[static_cast<int>(mode.value)];
  std::vector<Row> rows{{"kill_escaped", "escaped processes", launch::kill_escaped_name(mode.value), source}};
  const util::Sourced<util::ConsoleOverflow>& overflow = config.console_overflow;
  rows.push_back({"console_overflow", "slow console", launch::console_overflow_name(overflow.value),
                  overflow.source + (overflow.value == util::ConsoleOverflow::kBlock
                                         ? ": the workers' writes wait for it; no line is lost"
                                         : ": whole lines are dropped and counted; the workers never wait")});
  if (config.log_dir_required)
    rows.push_back({"log_dir_required", "log files required", true,
                    "a worker log file that cannot be written stops the job"});
  return rows;
}

// This host's interfaces and what becomes of each, for a job of several
// nodes: the rendezvous chooses each host's interface from what the other
// hosts reach (src/net/interface_choice.h), unless the user named one.
std::vector<Row> interface_rows(const std::vector<net::Interface>& interfaces) {
  std::vector<Row> rows;
  for (const auto& interface : interfaces) {
    const std::string key = "interface." + interface.name;
    const std::string label = "interface " + interface.name;
    if (!interface.excluded.empty()) {
      rows.push_back({key, label, "skipped", interface.excluded});
      continue;
    }
    std::vector<std::string> facts = interface.addresses;
    facts.push_back(net::describe_speed(interface.speed_mbps));
    if (interface.mtu > 0) facts.push_back(fmt::format("MTU {}", interface.mtu));
    rows.push_back({key, label, util::join(facts, ", "), "a candidate; the rendezvous chooses by reachability"});
  }
  return rows;
}

// The interface the workers get: the user's NCCL_SOCKET_IFNAME and
// GLOO_SOCKET_IFNAME as set (checked against this host), the rendezvous's
// choice for those unset.
std::vector<Row> socket_ifname_rows(const util::Environment& environment, const std::vector<net::Interface>& interfaces,
                                    const std::string& host) {
  std::vector<Row> rows;
  std::vector<std::string> unset;
  static const std::pair<const char*, const char*> kVariables[] = {{"NCCL_SOCKET_IFNAME", "nccl_socket_ifname"},
                                                                   {"GLOO_SOCKET_IFNAME", "gloo_socket_ifname"}};
  for (const auto& [variable, key] : kVariables) {
    auto value = environment.get(variable);
    if (!value) {
      unset.push_back(variable);
      continue;
    }
    auto problem = net::socket_ifname_problem(variable, *value, host, interfaces);
    rows.push_back({key, variable, *value, problem ? "set by you; " + *problem : "set by you"});
  }
  if (!unset.empty())
    rows.push_back({"worker_interface", "workers' interface", "chosen at the rendezvous",
                    fmt::format("the one every other node reaches, fastest first; the workers get it as {}",
                                util::join(unset, " and "))});
  return rows;
}

std::vector<Row> network_rows(const launch::LaunchConfig& config, const util::Environment& environment) {
  if (config.topology.launchers() == 1) return {};
  std::vector<net::Interface> interfaces;
  try {
    interfaces = net::list_interfaces();
  } catch (const util::SystemError& error) {
    return {{"interfaces", "interfaces", nullptr, error.what()}};
  }
  std::vector<Row> rows = interface_rows(interfaces);
  for (auto& row : socket_ifname_rows(environment, interfaces, util::local_host_name())) rows.push_back(std::move(row));
  return rows;
}

std::string text_value(const nlohmann::json& value) {
  if (value.is_null()) return "-";
  if (value.is_string()) return value.get<std::string>();
  if (value.is_boolean()) return value.get<bool>() ? "yes" : "no";
  return value.dump();
}

void print_text(const std::vector<Row>& rows, const std::vector<Row>& network, const launch::LaunchConfig& config) {
  fmt::print("dlaunch run would use:\n");
  std::size_t width = 0;
  for (const auto& row : rows) width = std::max(width, text_value(row.value).size());
  for (const auto& row : network) width = std::max(width, text_value(row.value).size());
  for (const auto& row : rows)
    fmt::print("  {:<22} {:<{}}  ({})\n", row.label, text_value(row.value), width, row.source);
  if (!config.command.empty()) fmt::print("  {:<22} {}\n", "worker command", util::join(config.command, " "));
  if (config.python) fmt::print("  {:<22} {}\n", "python", config.python->describe());
  if (!network.empty()) fmt::print("network (this host):\n");
  for (const auto& row : network)
    fmt::print("  {:<22} {:<{}}  ({})\n", row.label, text_value(row.value), width, row.source);
  for (const auto& notice : config.topology.notices) fmt::print("note: {}\n", notice);
}

void print_json(const std::vector<Row>& rows, const launch::LaunchConfig& config) {
  nlohmann::json document = nlohmann::json::object();
  for (const auto& row : rows) document[row.key] = {{"value", row.value}, {"source", row.source}};
  if (!config.command.empty()) document["command"] = config.command;
  if (config.python)
    document["python"] = {{"value", config.python->path ? nlohmann::json(*config.python->path) : nlohmann::json()},
                          {"name", config.python->name},
                          {"source", config.python->source}};
  document["notices"] = config.topology.notices;
  fmt::print("{}\n", document.dump(2));
}

constexpr const char* kEnvDescription =
    "Show the topology 'dlaunch run' would use here with the same options and environment, and "
    "where each value came from (a flag, a PET_, SLURM_ or SKYPILOT_ variable, or a default). Refuses, as "
    "dlaunch run does, a place where the job cannot form (a multi-node Slurm job outside an srun step, ...).";

void configure_env(CLI::App& app, bool& json) {
  app.prefix_command();
  util::set_usage(app, "dlaunch env [--json] [run options] [PROGRAM ...]");
  app.add_flag("--json", json, "Print the values and their sources as JSON")->group("Report");
  launch::add_run_options(app);
  util::finish_help(app, {
                             {"dlaunch env", "what dlaunch run would use here: nodes, ranks, master, port"},
                             {"srun --nodes 2 dlaunch env", "what each node of a Slurm step would derive"},
                             {"dlaunch env --json --nproc-per-node 2 train.py",
                              "the same as JSON, with these options and PROGRAM"},
                         });
}

}  // namespace

int env_command(const CommandArgs& args) {
  CLI::App app(kEnvDescription, "dlaunch env");
  bool json = false;
  configure_env(app, json);
  if (!util::parse_command_line(app, args, "dlaunch env")) return 0;
  util::Environment environment = util::Environment::from_process();
  launch::RunOptions options = launch::run_options_from(app, environment);
  launch::LaunchConfig config = launch::resolve_launch_config(options, environment);
  auto rows = topology_rows(config.topology);
  for (auto& row : reliability_rows(config)) rows.push_back(std::move(row));
  for (auto& row : job_option_rows(config, options)) rows.push_back(std::move(row));
  for (auto& row : supervision_rows(config)) rows.push_back(std::move(row));
  auto network = network_rows(config, environment);
  if (json) {
    rows.insert(rows.end(), network.begin(), network.end());
    print_json(rows, config);
  } else {
    print_text(rows, network, config);
  }
  return 0;
}

util::CommandLineSpec env_command_line() { return command_line_of(kEnvDescription, "dlaunch env", configure_env); }

}  // namespace dlaunch::cli
