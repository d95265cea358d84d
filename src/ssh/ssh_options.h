// The command line of `dlaunch ssh`: its own options, the dlaunch run
// options it passes to every host, and PROGRAM [ARGS...].
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "util/command_line_spec.h"

namespace dlaunch::ssh {

struct SshOptions {
  std::optional<std::string> hosts;     // --hosts h1,h2,gpu[01-04]
  std::optional<int> nnodes;            // --nnodes: hosts that train; the rest are spares
  std::optional<int> spare_nodes;       // --spare-nodes: hosts that stand by (the rest train)
  std::optional<std::string> hostfile;  // --hostfile FILE
  std::optional<std::string> include;   // --include host1@host2:0,1
  std::optional<std::string> exclude;
  std::vector<std::string> ssh_args;    // --ssh-arg, repeatable, before ours so they win
  int connect_timeout = 10;             // seconds, for ssh's ConnectTimeout
  std::optional<std::string> master_addr;
  std::optional<int> master_port;
  std::vector<std::string> env;         // --env NAME or NAME=VALUE, repeatable
  std::optional<std::string> env_file;
  std::optional<std::string> remote_dlaunch;  // dlaunch's path on the hosts
  std::optional<std::string> host_log_dir;    // per-host files instead of the console
  bool no_preflight = false;
  std::vector<std::string> run_args;    // dlaunch run options for every host
  std::vector<std::string> command;     // PROGRAM [ARGS...]
};

// Parses ARGS (after "dlaunch ssh"). Returns nullopt when --help was
// printed. Throws UsageError for unknown options (with a suggestion), a
// missing value, run options dlaunch ssh sets itself, or no PROGRAM.
std::optional<SshOptions> parse_ssh_options(const std::vector<std::string>& args);

std::string ssh_options_help();

// The options of `dlaunch ssh` (its own and the run options it passes on),
// for `dlaunch completion`.
util::CommandLineSpec describe_ssh_options();

}  // namespace dlaunch::ssh
