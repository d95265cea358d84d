#include "launch/skypilot_context.h"

#include <fmt/format.h>

#include "util/error.h"
#include "util/strings.h"

namespace dlaunch::launch {
namespace {

constexpr const char* kNodeIps = "SKYPILOT_NODE_IPS";
constexpr const char* kNodeRank = "SKYPILOT_NODE_RANK";
constexpr const char* kNumNodes = "SKYPILOT_NUM_NODES";
constexpr const char* kGpusPerNode = "SKYPILOT_NUM_GPUS_PER_NODE";
// As --nnodes takes it; launch_site caps the launchers of a job far lower.
constexpr int kMostNodes = 1 << 20;

// SkyPilot sets the three together: one alone is a hand-made environment
// that would place this launcher half by SkyPilot, half by default.
std::string required(const util::Environment& environment, const char* name) {
  auto value = environment.get(name);
  if (!value)
    throw util::InputError(fmt::format(
        "{} is not set, but {}, {} and {} are set together by SkyPilot in a task's run commands; set all "
        "three, or unset them to run without SkyPilot",
        name, kNodeIps, kNodeRank, kNumNodes));
  return *value;
}

util::Sourced<int> required_int(const util::Environment& environment, const char* name, int low) {
  auto value = util::parse_int_in_range(required(environment, name), low, kMostNodes, name);
  return util::Sourced<int>{static_cast<int>(value), name};
}

// One address a line, as SkyPilot writes them; blank lines (a trailing
// newline) are skipped, and a line with a space or comma in it is refused:
// a list written another way would otherwise pass as one address.
std::vector<std::string> node_ips(const std::string& text) {
  std::vector<std::string> ips;
  for (const auto& line : util::split(text, '\n')) {
    std::string ip(util::trim(line));
    if (ip.empty()) continue;
    if (ip.find_first_of(" \t,;") != std::string::npos)
      throw util::InputError(fmt::format(
          "{} holds '{}', which is not one address: expected one IP address a line, node 0's first",
          kNodeIps, ip));
    ips.push_back(std::move(ip));
  }
  return ips;
}

}  // namespace

std::optional<SkyPilotContext> read_skypilot_context(const util::Environment& environment) {
  if (!environment.has(kNodeIps) && !environment.has(kNodeRank) && !environment.has(kNumNodes))
    return std::nullopt;
  SkyPilotContext context;
  context.num_nodes = required_int(environment, kNumNodes, 1);
  context.node_rank = required_int(environment, kNodeRank, 0);
  context.node_ips = node_ips(required(environment, kNodeIps));
  const int nodes = context.num_nodes.value;
  if (context.node_ips.size() != static_cast<std::size_t>(nodes))
    throw util::InputError(fmt::format(
        "{} lists {} address{} but {}={}: expected one IP address a line for each node, node 0's first",
        kNodeIps, context.node_ips.size(), context.node_ips.size() == 1 ? "" : "es", kNumNodes, nodes));
  if (context.node_rank.value >= nodes)
    throw util::InputError(fmt::format("{}={} is out of range: {}={} gives node ranks 0 to {}", kNodeRank,
                                       context.node_rank.value, kNumNodes, nodes, nodes - 1));
  context.head_ip = util::Sourced<std::string>{context.node_ips.front(), fmt::format("first of {}", kNodeIps)};
  if (auto gpus = environment.get(kGpusPerNode))
    context.gpus_per_node =
        util::Sourced<int>{static_cast<int>(util::parse_int_in_range(*gpus, 0, 4096, kGpusPerNode)), kGpusPerNode};
  return context;
}

std::optional<SkyPilotContext> skypilot_placement(const util::Environment& environment,
                                                  const std::optional<slurm::SlurmContext>& slurm) {
  if (slurm && slurm->in_srun_step()) return std::nullopt;
  return read_skypilot_context(environment);
}

}  // namespace dlaunch::launch
