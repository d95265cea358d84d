#include "launch/hand_off_check.h"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>

#include "launch/run_options.h"
#include "util/error.h"

namespace dlaunch::launch {
namespace {

// The option names (without a value: "--prefix") HAND_OFF's arguments give
// before the program, longest first, so that "--health-check-timeout" is
// found in a message before "--health-check".
std::vector<std::string> option_names(const std::vector<std::string>& args) {
  std::vector<std::string> names;
  for (const std::string& arg : args) {
    if (arg == "--") break;
    if (arg.starts_with("-")) names.push_back(arg.substr(0, arg.find('=')));
  }
  std::sort(names.begin(), names.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
  return names;
}

bool name_character(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_'; }

// Whether MESSAGE names NAME whole: "--tee" is not the start of "--tee-file".
bool names_option(const std::string& message, const std::string& name) {
  for (auto at = message.find(name); at != std::string::npos; at = message.find(name, at + 1)) {
    std::size_t end = at + name.size();
    if (end == message.size() || !name_character(message[end])) return true;
  }
  return false;
}

// Where the option MESSAGE is about came from: the first option of the
// arguments the message names, as HAND_OFF's origin_of tells it.
std::string origin_in(const std::string& message, const HandOff& hand_off) {
  if (!hand_off.origin_of) return "";
  for (const std::string& name : option_names(hand_off.run_args)) {
    if (names_option(message, name)) return hand_off.origin_of(name);
  }
  return "";
}

// MESSAGE, said of the hand-off: where the option came from, and that it
// was judged as the nodes will judge it, before anything left.
std::string refusal(const std::string& message, const HandOff& hand_off) {
  std::string origin = origin_in(message, hand_off);
  std::string_view said = message;
  if (said.ends_with('.')) said.remove_suffix(1);  // its sentence goes on with the origin
  return fmt::format("{}: {}{}. Checked as every node's dlaunch run will read it, before {}: nothing was {}",
                     hand_off.command, said, origin.empty() ? "" : fmt::format(" (given as {})", origin),
                     hand_off.before, std::string_view(hand_off.before) == "sbatch" ? "submitted" : "started");
}

// --help and --check-only are valid on the nodes, and would make every
// node print or check and exit 0 without running a worker: a job that
// "succeeds" having done nothing. Refused before it leaves.
[[noreturn]] void refuse_no_op(const char* option) {
  throw util::UsageError(fmt::format("{} would make every node's dlaunch run {} and exit without starting a "
                                     "worker; drop it (the options are checked here, now)",
                                     option, std::string_view(option) == "--help" ? "print its help" : "check"));
}

LaunchConfig parse_and_resolve(const HandOff& hand_off) {
  const RunOptionsCommand& command = hand_off.exec ? kExecCommand : RunOptionsCommand{};
  // parse_run_options prints the help for --help; none is wanted here.
  for (const std::string& arg : hand_off.run_args) {
    if (arg == "--") break;
    if (arg == "--help" || arg == "-h") refuse_no_op("--help");
  }
  auto options = parse_run_options(hand_off.run_args, hand_off.node_environment, true, command);
  if (!options) refuse_no_op("--help");
  if (options->check_only) refuse_no_op("--check-only");
  if (hand_off.exec) return {};  // exec resolves nothing more than its parser checks
  return resolve_launch_config(*options, hand_off.node_environment, HostLookups::kElsewhere);
}

}  // namespace

LaunchConfig check_hand_off(const HandOff& hand_off) {
  try {
    return parse_and_resolve(hand_off);
  } catch (const util::UsageError& error) {
    throw util::UsageError(refusal(error.what(), hand_off));
  } catch (const util::InputError& error) {
    throw util::InputError(refusal(error.what(), hand_off));
  }
}

util::Environment slurm_step_stand_in(int nodes, int gpus_per_node) {
  util::Environment environment;
  // A batch job's first step on its first node, as srun starts it.
  environment.set("SLURM_JOB_ID", "1");
  environment.set("SLURM_STEP_ID", "0");
  environment.set("SLURM_NODEID", "0");
  environment.set("SLURM_STEP_NUM_NODES", std::to_string(nodes));
  environment.set("SLURM_JOB_NUM_NODES", std::to_string(nodes));
  // One name per node, so a node list is read as on the nodes (its size
  // against the launchers); the names themselves are never dialled.
  environment.set("SLURM_STEP_NODELIST", nodes == 1 ? std::string("node0") : fmt::format("node[0-{}]", nodes - 1));
  if (gpus_per_node > 0) environment.set("SLURM_GPUS_ON_NODE", std::to_string(gpus_per_node));
  return environment;
}

std::string check_only_line(const LaunchConfig& config) {
  const Topology& topology = config.topology;
  std::string spares =
      topology.spare_nodes.value > 0 ? fmt::format(" and {} spare(s)", topology.spare_nodes.value) : "";
  // A program under Python is "PYTHON -u [-m] PROGRAM ...": named with its interpreter.
  std::string program = config.command.empty() ? std::string() : config.command.front();
  if (config.python && config.command.size() > 2) {
    bool module = config.command[2] == "-m" && config.command.size() > 3;
    program = fmt::format("{} under {}", module ? "-m " + config.command[3] : config.command[2],
                          config.python->describe());
  }
  return fmt::format("dlaunch run: the options are valid: {} node(s){} ({}), {} worker(s) on this node ({}), "
                     "node rank {} ({}), program {}; nothing was started",
                     topology.nnodes.value, spares, topology.nnodes.source, topology.nproc_per_node.value,
                     topology.nproc_per_node.source, topology.node_rank.value, topology.node_rank.source, program);
}

}  // namespace dlaunch::launch
