// What `dlaunch ssh` runs on each host: pure text, unit-tested.
//
// Each host gets one ssh command whose remote part changes to the working
// folder, reads the rendezvous secret from the session's stdin (so it is
// in no command line on either machine), sets the carried variables and
// execs `dlaunch run` with that host's node rank and worker count.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dlaunch::ssh {

// ssh's own exit code when it could not connect or lost the connection,
// told apart from the remote command's.
inline constexpr int kSshFailed = 255;

// What every host of the job shares.
struct JobPlan {
  int nnodes = 1;       // hosts that train
  int spare_nodes = 0;  // hosts after them that stand by
  std::string master_addr;
  int master_port = 0;
  std::string run_id;
  bool uneven = false;  // hosts run different worker counts
  std::string working_dir;
  std::vector<std::pair<std::string, std::string>> env;  // carried to every host
  std::string remote_dlaunch;
  std::vector<std::string> run_args;
  std::vector<std::string> command;
  std::vector<std::string> ssh_args;
  int connect_timeout = 10;
};

// One host's part.
struct HostLaunch {
  std::string host;
  int node_rank = 0;
  std::optional<int> nproc;        // nullopt: --nproc-per-node from the run args, or run's default
  std::vector<int> visible_slots;  // a slot selection: CUDA_VISIBLE_DEVICES on that host
};

// ssh's argv for running REMOTE_COMMAND on HOST: the user's --ssh-arg
// options first (ssh keeps the first value of an option, so they win), then
// BatchMode (never a password prompt) and ConnectTimeout.
std::vector<std::string> ssh_argv(const JobPlan& plan, const std::string& host,
                                  const std::string& remote_command);

// The shell command that starts HOST's dlaunch run.
std::string remote_launch_command(const JobPlan& plan, const HostLaunch& host);

// The words after `dlaunch run` in HOST's remote command: the options
// dlaunch ssh sets, the forwarded run options, "--" and the program. dlaunch
// ssh checks them, as node 0 will read them, before any ssh starts.
std::vector<std::string> remote_run_arguments(const JobPlan& plan, const HostLaunch& host);

// The shell command that checks a host before anything starts; it prints
// "dlaunch-preflight: ..." lines (see ssh_preflight). WORKER_ARGV is the
// worker's argv as dlaunch run will build it (interpreter included).
std::string remote_preflight_command(const JobPlan& plan, const std::vector<std::string>& worker_argv);

// The variables of --env and --env-file: NAME takes its value from
// ENVIRONMENT_VALUE(NAME); NAME=VALUE is literal. Throws InputError for bad
// names, unset variables, the rendezvous secret, or a bad env-file line.
std::vector<std::pair<std::string, std::string>> carried_variables(
    const std::vector<std::string>& env_options, const std::optional<std::string>& env_file_text,
    const std::string& env_file_name,
    const std::function<std::optional<std::string>(const std::string&)>& environment_value);

}  // namespace dlaunch::ssh
