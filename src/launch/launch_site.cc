#include "launch/launch_site.h"

#include <algorithm>
#include <arpa/inet.h>
#include <cctype>
#include <fmt/format.h>
#include <netinet/in.h>
#include <set>

#include "launch/launch_config.h"
#include "launch/skypilot_context.h"
#include "slurm/slurm_context.h"
#include "slurm/tasks_per_node.h"
#include "util/error.h"
#include "util/shell_words.h"
#include "util/strings.h"

namespace dlaunch::launch {
namespace {

// VALUE as the user gave it: "--nnodes 4", "PET_NNODES=4", else "4 (from SOURCE)".
template <typename T>
std::string named(const util::Sourced<T>& setting) {
  const std::string& source = setting.source;
  if (source.starts_with("-")) return fmt::format("{} {}", source, setting.value);
  bool variable = !source.empty() && std::all_of(source.begin(), source.end(), [](char c) {
    return std::isupper(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_';
  });
  if (variable) return fmt::format("{}={}", source, setting.value);
  return fmt::format("{} (from {})", setting.value, source);
}

// The command the user runs on each node, as far as it is known here: the
// options are theirs to repeat, the program is theirs as given.
std::string run_line(const RunOptions& options) {
  return "dlaunch run [OPTIONS] " + (options.command.empty() ? std::string("PROGRAM") : util::shell_join(options.command));
}

std::string srun_line(int nodes, const RunOptions& options) {
  return fmt::format("srun --nodes {} --ntasks-per-node 1 {}", nodes, run_line(options));
}

std::string launchers_named(const Topology& topology) {
  if (topology.spare_nodes.value == 0)
    return fmt::format("{} asks for {} launcher{}", named(topology.nnodes), topology.nnodes.value,
                       topology.nnodes.value == 1 ? "" : "s");
  return fmt::format("{} and {} make {} launchers", named(topology.nnodes), named(topology.spare_nodes),
                     topology.launchers());
}

void check_launcher_count(const Topology& topology) {
  if (topology.launchers() <= kMostLaunchers) return;
  throw util::InputError(fmt::format(
      "{}, more than the {} one job takes: node 0 sends every launcher the whole job in one message of at most "
      "1 MiB; give {} with nnodes + spare nodes at most {}",
      launchers_named(topology), kMostLaunchers, topology.spare_nodes.value > 0 ? "fewer spare nodes" : "fewer nodes",
      kMostLaunchers));
}

// Any one of these says the user placed the launchers by hand (dlaunch
// ssh passes them all; a run of this one node in a big allocation passes
// --nnodes 1 or --standalone): the allocation's size is then not the job's,
// and nothing is refused. A PET_* variable counts as its flag.
bool placed_by_hand(const RunOptions& options) {
  return options.nnodes || options.node_rank || options.master_addr || options.rdzv_endpoint || options.standalone;
}

// A job of several nodes, run outside any srun step, starts one launcher
// where it needs one a node: the others never come.
void check_inside_a_step(const RunOptions& options, const util::Environment& environment) {
  auto outside = slurm::outside_step_of_multinode_job(environment);
  if (!outside || placed_by_hand(options)) return;
  const int nodes = outside->job_nodes.value;
  throw util::InputError(fmt::format(
      "{} but {}: this runs outside any srun step of Slurm job {} (in its batch script or an salloc shell), so "
      "only this one launcher would start and the rendezvous would wait for {} more that never come. Start one "
      "launcher on each node with: {} (or submit it with dlaunch submit --srun); to place the launchers "
      "yourself, give --nnodes, --node-rank and --master-addr",
      named(outside->job_nodes), outside->why, outside->job_id, nodes - 1, srun_line(nodes, options)));
}

struct TaskLayout {
  util::Sourced<std::string> variable;
  int most = 1;  // the most tasks on one node
};

// The step's tasks on each node: SLURM_STEP_TASKS_PER_NODE, else
// SLURM_TASKS_PER_NODE ("2(x2)" both), else SLURM_NTASKS_PER_NODE (the
// count asked for). The step's own first: the last may be sbatch's
// request, inherited by a step that asked for another layout.
std::optional<TaskLayout> task_layout(const util::Environment& environment) {
  for (const char* name : {"SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE"}) {
    auto value = environment.get(name);
    if (!value) continue;
    std::vector<int> counts;
    try {
      counts = slurm::parse_tasks_per_node(*value);
    } catch (const util::InputError&) {
      throw util::InputError(fmt::format("{}='{}' is not Slurm's format: expected a task count per node such as "
                                         "'1(x4)' or '4(x2),2'",
                                         name, *value));
    }
    if (counts.empty()) continue;
    return TaskLayout{{*value, name}, *std::max_element(counts.begin(), counts.end())};
  }
  if (auto value = environment.get("SLURM_NTASKS_PER_NODE"))
    return TaskLayout{{*value, "SLURM_NTASKS_PER_NODE"},
                      static_cast<int>(util::parse_int_in_range(*value, 1, 1 << 20, "SLURM_NTASKS_PER_NODE"))};
  return std::nullopt;
}

// Every task of the step would be a launcher that starts every worker of
// its node. Refused on every node, the crowded or not, so that no launcher
// waits for the others.
void check_one_task_per_node(const RunOptions& options, const slurm::SlurmContext& slurm,
                             const util::Environment& environment) {
  auto layout = task_layout(environment);
  if (!layout || layout->most <= 1) return;
  const int nodes = slurm.num_nodes ? slurm.num_nodes->value : 1;
  throw util::InputError(fmt::format(
      "{}: this srun step runs {} tasks on a node, so {} launchers would start there, each starting every worker "
      "of the node (the second finds the rendezvous port taken). dlaunch run starts the workers of its node "
      "itself and wants one task per node: {}; for one task per GPU instead, start each with dlaunch exec "
      "(dlaunch submit --launch task)",
      named(layout->variable), layout->most, layout->most, srun_line(nodes, options)));
}

// In a step srun started, Slurm starts one launcher on each of its nodes
// and numbers them SLURM_NODEID: a job of more launchers waits for some that
// never start (one of fewer has no place for some that do), and a node rank
// given by hand makes two launchers claim one place. --standalone runs a
// job of its node alone on each node, as torchrun --standalone does.
void check_step_size(const RunOptions& options, const Topology& topology, const slurm::SlurmContext& slurm) {
  if (options.standalone || !slurm.num_nodes) return;
  const util::Sourced<int>& step = *slurm.num_nodes;
  const int launchers = topology.launchers();
  if (launchers > step.value)
    throw util::InputError(fmt::format(
        "{}, but this Slurm step has {} node{} ({}), one launcher each: the rendezvous would wait for {} that never "
        "start. Start the step on {} nodes: {}; or leave out {} to take the step's {}",
        launchers_named(topology), step.value, step.value == 1 ? "" : "s", named(step), launchers - step.value,
        launchers, srun_line(launchers, options), topology.nnodes.source, step.value));
  if (launchers < step.value)
    throw util::InputError(fmt::format(
        "{}, but this Slurm step has {} nodes ({}), one launcher each: give --nnodes and --spare-nodes that add up "
        "to {}, or start the step on {} node{}: {}",
        launchers_named(topology), step.value, named(step), step.value, launchers, launchers == 1 ? "" : "s",
        srun_line(launchers, options)));
  if (options.node_rank && slurm.node_id && topology.node_rank.value != slurm.node_id->value)
    throw util::InputError(fmt::format(
        "{} is not this node's {}: in a Slurm step each launcher's place is its node's SLURM_NODEID, and a rank "
        "given by hand makes two launchers claim one place; leave out {}",
        named(topology.node_rank), named(*slurm.node_id), topology.node_rank.source));
}

// An address that, dialled, reaches only the dialling host: 127.0.0.0/8,
// ::1, the unspecified 0.0.0.0 and :: (Linux connects those to itself),
// and the names RFC 6761 keeps for the loopback (localhost, *.localhost).
bool reaches_only_this_host(std::string host) {
  std::transform(host.begin(), host.end(), host.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  while (!host.empty() && host.back() == '.') host.pop_back();
  if (host == "localhost" || host.ends_with(".localhost")) return true;
  in_addr v4{};
  if (inet_aton(host.c_str(), &v4) != 0) {
    std::uint32_t address = ntohl(v4.s_addr);
    return (address >> 24) == 127 || address == 0;
  }
  in6_addr v6{};
  if (inet_pton(AF_INET6, host.c_str(), &v6) == 1) {
    if (IN6_IS_ADDR_LOOPBACK(&v6) || IN6_IS_ADDR_UNSPECIFIED(&v6)) return true;
    return IN6_IS_ADDR_V4MAPPED(&v6) && (v6.s6_addr[12] == 127 || std::all_of(v6.s6_addr + 12, v6.s6_addr + 16,
                                                                             [](std::uint8_t b) { return b == 0; }));
  }
  return false;
}

// Why the launchers are known to run on different hosts; nullopt when
// dlaunch cannot know (outside Slurm and SkyPilot, several launchers on one
// host meeting on 127.0.0.1 is a real job: the tests run so).
std::optional<std::string> hosts_known_to_differ(const std::optional<slurm::SlurmContext>& slurm,
                                                 const std::optional<SkyPilotContext>& skypilot) {
  // Slurm's nodes of one step are separate hosts.
  if (slurm && slurm->in_srun_step() && slurm->num_nodes && slurm->num_nodes->value > 1)
    return fmt::format("this Slurm step spans {} nodes ({}), each a host of its own", slurm->num_nodes->value,
                       named(*slurm->num_nodes));
  if (skypilot) {
    std::set<std::string> hosts(skypilot->node_ips.begin(), skypilot->node_ips.end());
    if (hosts.size() > 1) return fmt::format("SKYPILOT_NODE_IPS lists {} different hosts", hosts.size());
  }
  return std::nullopt;
}

void check_rendezvous_host(const Topology& topology, const std::optional<slurm::SlurmContext>& slurm,
                           const std::optional<SkyPilotContext>& skypilot) {
  if (topology.launchers() < 2 || !reaches_only_this_host(topology.master_addr.value)) return;
  auto hosts = hosts_known_to_differ(slurm, skypilot);
  if (!hosts) return;
  throw util::InputError(fmt::format(
      "{} is a loopback address, but {}: the launchers on the other hosts would dial their own loopback, not "
      "node 0, and wait. Give an address of node 0 that every host reaches{}",
      named(topology.master_addr), *hosts,
      topology.in_slurm ? ", or leave out --master-addr to take the step's first node" : ""));
}

}  // namespace

void check_launch_site(const RunOptions& options, const Topology& topology, const util::Environment& environment) {
  check_launcher_count(topology);
  auto slurm = slurm::read_slurm_context(environment);
  auto skypilot = skypilot_placement(environment, slurm);
  if (slurm && slurm->in_srun_step()) {
    check_one_task_per_node(options, *slurm, environment);
    check_step_size(options, topology, *slurm);
  } else if (!skypilot) {
    // SkyPilot places a launcher on each node itself, Slurm job or not.
    check_inside_a_step(options, environment);
  }
  check_rendezvous_host(topology, slurm, skypilot);
}

}  // namespace dlaunch::launch
