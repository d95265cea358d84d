#include "cli/ssh_command.h"

#include <csignal>
#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <optional>
#include <random>
#include <set>

#include "cli/stacks_folder.h"
#include "launch/hand_off_check.h"
#include "launch/launch_config.h"
#include "launch/token_setting.h"
#include "launch/run_options.h"
#include "launch/verdict_line.h"
#include "process/signal_channel.h"
#include "slurm/hostlist.h"
#include "ssh/host_file.h"
#include "ssh/remote_command.h"
#include "ssh/ssh_options.h"
#include "ssh/ssh_preflight.h"
#include "ssh/ssh_sessions.h"
#include "util/environment.h"
#include "util/error.h"
#include "util/outside_file.h"
#include "util/own_executable.h"
#include "util/strings.h"
#include "wire/token.h"

namespace dlaunch::cli {
namespace {

using namespace ssh;

// A hostfile or an env file is a few kilobytes; a bigger one is a mistake.
constexpr std::size_t kMaxOptionFileBytes = 1 << 20;

// The file the user named for OPTION, as WHAT ("a hostfile"). Read as
// util::read_outside_file does: a FIFO or a device there is refused at once
// (a blocking read waited forever), and so is a file over 1 MiB; a link is
// the user's to make, so it is followed.
std::string read_text_file(const std::string& path, const char* option, std::string_view what) {
  auto text = util::read_outside_file(path, {what, kMaxOptionFileBytes, util::Links::kFollow});
  if (!text)
    throw util::InputError(fmt::format("{} {}: there is no such file; give the path of {}", option, path, what));
  return *text;
}

std::vector<ssh::HostEntry> job_hosts(const ssh::SshOptions& options) {
  auto hosts = options.hosts ? ssh::parse_host_list(*options.hosts)
                             : ssh::parse_host_file(read_text_file(*options.hostfile, "--hostfile", "a hostfile"),
                                               *options.hostfile);
  return ssh::select_hosts(std::move(hosts), options.include, options.exclude);
}

// A port for node 0's rendezvous in the range dlaunch run derives Slurm
// ports from; two jobs on one master rarely draw the same, and if they do
// node 0 says so and the job stops at once.
int random_port() {
  std::mt19937 random(std::random_device{}());
  return launch::kDefaultPortRangeLow +
         static_cast<int>(random() % (launch::kDefaultPortRangeHigh - launch::kDefaultPortRangeLow + 1));
}

std::string random_run_id() {
  return "ssh-" + rendezvous::generate_token().substr(0, 12);
}

// Hosts with slots=N run N workers; when those differ every node must
// consent to uneven counts.
bool uneven(const std::vector<ssh::HostEntry>& hosts) {
  std::set<std::optional<int>> counts;
  for (const auto& entry : hosts) counts.insert(entry.slots);
  return counts.size() > 1;
}

// How many of HOST_COUNT hosts train: --nnodes, or all but --spare-nodes
// (the two must add up when both are given), or all.
int training_hosts(const ssh::SshOptions& options, int host_count) {
  const char* hosts = host_count == 1 ? "host" : "hosts";
  if (options.spare_nodes && *options.spare_nodes >= host_count)
    throw util::InputError(fmt::format("--spare-nodes {} leaves none of the {} {} given to train; give at most "
                                       "{}, or more hosts",
                                       *options.spare_nodes, host_count, hosts, host_count - 1));
  if (options.nnodes && options.spare_nodes && *options.nnodes + *options.spare_nodes != host_count)
    throw util::InputError(fmt::format("--nnodes {} and --spare-nodes {} make {} hosts, but {} {} given; every "
                                       "host beyond --nnodes is a spare: give one of the two, or as many hosts",
                                       *options.nnodes, *options.spare_nodes, *options.nnodes + *options.spare_nodes,
                                       host_count, host_count == 1 ? "is" : "are"));
  int nnodes = options.nnodes.value_or(host_count - options.spare_nodes.value_or(0));
  if (nnodes > host_count)
    throw util::InputError(fmt::format("--nnodes {} asks for more nodes than the {} {} given; give "
                                       "at most {}, or more hosts",
                                       nnodes, host_count, hosts, host_count));
  return nnodes;
}

ssh::JobPlan make_plan(const ssh::SshOptions& options, const std::vector<ssh::HostEntry>& hosts,
                  const util::Environment& environment) {
  ssh::JobPlan plan;
  const int host_count = static_cast<int>(hosts.size());
  plan.nnodes = training_hosts(options, host_count);
  plan.spare_nodes = host_count - plan.nnodes;
  plan.master_addr = options.master_addr.value_or(hosts.front().host);
  plan.master_port = options.master_port.value_or(random_port());
  plan.run_id = random_run_id();
  plan.uneven = uneven(hosts);
  plan.working_dir = std::filesystem::current_path().string();
  std::optional<std::string> env_file;
  if (options.env_file) env_file = read_text_file(*options.env_file, "--env-file", "an env file");
  plan.env = ssh::carried_variables(options.env, env_file, options.env_file.value_or(""),
                               [&](const std::string& name) { return environment.get(name); });
  plan.remote_dlaunch = options.remote_dlaunch.value_or(util::own_executable());
  plan.run_args = options.run_args;
  plan.command = options.command;
  plan.ssh_args = options.ssh_args;
  plan.connect_timeout = options.connect_timeout;
  return plan;
}

// The worker's argv as each host's dlaunch run will build it, for the preflight.
std::vector<std::string> worker_argv(const ssh::SshOptions& options, const util::Environment& environment) {
  std::vector<std::string> args = options.run_args;
  args.push_back("--");
  args.insert(args.end(), options.command.begin(), options.command.end());
  auto run = launch::parse_run_options(args, environment);
  return launch::worker_command(*run, environment);
}

void preflight(const ssh::JobPlan& plan, const std::vector<ssh::HostEntry>& hosts,
               const ssh::SshOptions& options, const util::Environment& environment) {
  std::vector<std::string> names;
  for (const auto& entry : hosts) names.push_back(entry.host);
  auto problems = ssh::preflight_hosts(plan, names, worker_argv(options, environment));
  if (problems.empty()) return;
  std::string text = fmt::format("dlaunch ssh: the job did not start: {} problem{} on {} host{}:",
                                 problems.size(), problems.size() == 1 ? "" : "s", hosts.size(),
                                 hosts.size() == 1 ? "" : "s");
  for (const auto& problem : problems) text += "\n  " + problem;
  throw util::SystemError(text);
}

ssh::HostLaunch host_launch(const std::vector<ssh::HostEntry>& hosts, std::size_t rank) {
  return ssh::HostLaunch{hosts[rank].host, static_cast<int>(rank), hosts[rank].slots, hosts[rank].selected};
}

// Stands for a host's GPUs where the host file does not select them: the
// most a node may run, so that no count the host could give is refused
// here (--nproc-per-node gpu is counted there, not on this machine).
std::string stand_in_devices() {
  constexpr int kMostWorkers = 4096;  // dlaunch run's bound for --nproc-per-node
  std::string list = "0";
  for (int device = 1; device < kMostWorkers; ++device) {
    list += ',';
    list += std::to_string(device);
  }
  return list;
}

// Node 0's dlaunch run command line, read by dlaunch run's own code before
// any ssh starts: every host gets the same options but its rank (and its
// slots), so a mistake would stop each of them after the connections.
// Node 0's environment is the variables carried to it (--env, --env-file)
// and its GPU selection; the rest of it only the host knows.
void check_node_arguments(const ssh::JobPlan& plan, const std::vector<ssh::HostEntry>& hosts) {
  ssh::HostLaunch first = host_launch(hosts, 0);
  launch::HandOff hand_off;
  hand_off.command = "dlaunch ssh";
  hand_off.before = "ssh";
  hand_off.run_args = ssh::remote_run_arguments(plan, first);
  for (const auto& [name, value] : plan.env) hand_off.node_environment.set(name, value);
  hand_off.node_environment.set("CUDA_VISIBLE_DEVICES", first.visible_slots.empty()
                                                            ? stand_in_devices()
                                                            : fmt::format("{}", fmt::join(first.visible_slots, ",")));
  hand_off.node_environment.set(launch::kTokenVariable, std::string(64, 'f'));  // sent on stdin to every host
  (void)launch::check_hand_off(hand_off);
}

std::vector<ssh::Session> make_sessions(const ssh::JobPlan& plan, const std::vector<ssh::HostEntry>& hosts) {
  std::vector<ssh::Session> sessions;
  for (std::size_t rank = 0; rank < hosts.size(); ++rank) {
    ssh::HostLaunch launch = host_launch(hosts, rank);
    sessions.push_back(
        ssh::Session{launch.host, launch.node_rank,
                     ssh::ssh_argv(plan, launch.host, ssh::remote_launch_command(plan, launch))});
  }
  return sessions;
}

// A grace longer than the hosts' own --shutdown-timeout (as given on the
// command line: PET_ variables here do not reach the hosts), so their
// launchers stop their workers before ssh is signalled.
std::chrono::milliseconds hang_up_grace(const ssh::SshOptions& options) {
  std::chrono::milliseconds timeout = launch::kDefaultShutdownTimeout;
  if (auto value = launch::run_option_value(options.run_args, "--shutdown-timeout"))
    timeout = std::chrono::seconds(util::parse_int_in_range(*value, 0, 7 * 24 * 3600, "--shutdown-timeout"));
  return timeout + std::chrono::seconds(15);
}

}  // namespace

int ssh_command(const CommandArgs& args) {
  auto options = ssh::parse_ssh_options(args);
  if (!options) return 0;
  util::Environment environment = util::Environment::from_process();
  auto hosts = job_hosts(*options);
  ssh::JobPlan plan = make_plan(*options, hosts, environment);
  check_node_arguments(plan, hosts);
  if (!options->no_preflight) preflight(plan, hosts, *options, environment);
  std::vector<std::string> names;
  for (const auto& entry : hosts) names.push_back(entry.host);
  fmt::print(stderr, "dlaunch ssh: {} host{} ({}), node 0's rendezvous at {}:{}{}\n", hosts.size(),
             hosts.size() == 1 ? "" : "s", slurm::compress_hostlist(names), plan.master_addr,
             plan.master_port,
             plan.spare_nodes > 0 ? fmt::format("; {} train, {} stand by as spares", plan.nnodes,
                                                plan.spare_nodes)
                                  : "");
  // A host that closes its end early must not kill dlaunch ssh.
  ::signal(SIGPIPE, SIG_IGN);
  process::SignalChannel signals;
  ssh::SessionSettings settings;
  std::string token = rendezvous::generate_token();
  settings.first_line = token + "\n";
  auto stacks_folder = make_stacks_folder(plan, token, environment);
  if (stacks_folder)
    fmt::print(stderr, "dlaunch ssh: 'dlaunch stacks {}' shows where every rank is while the job runs\n",
               stacks_folder->path());
  settings.host_log_dir = options->host_log_dir;
  settings.grace = hang_up_grace(*options);
  settings.hosts_replaceable =
      plan.spare_nodes > 0 || launch::run_option_value(options->run_args, "--min-nodes").has_value();
  // The launcher that speaks for the job says its verdict, sealed with the
  // job's secret: then the job is over, whatever a frozen host does.
  settings.read_verdict = [run_id = plan.run_id, token](std::string_view line) {
    return launch::read_verdict_line(line, run_id, token);
  };
  return ssh::run_sessions(make_sessions(plan, hosts), settings, signals);
}

}  // namespace dlaunch::cli
