#include "ssh/ssh_options.h"

#include <fmt/format.h>
#include <functional>

#include "launch/run_options.h"
#include "util/environment.h"
#include "util/error.h"
#include "util/strings.h"

namespace dlaunch::ssh {
namespace {

struct OwnOption {
  const char* name;
  bool takes_value;
  std::function<void(SshOptions&, const std::string&)> apply;
  const char* help;
};

int seconds_value(const std::string& value, const char* option) {
  return static_cast<int>(util::parse_int_in_range(value, 1, 3600, option));
}

const std::vector<OwnOption>& own_options() {
  static const std::vector<OwnOption> options = {
      {"--hosts", true, [](SshOptions& o, const std::string& v) { o.hosts = v; },
       "Hosts in node-rank order: h1,h2 or hostlists such as gpu[01-04]"},
      {"--nnodes", true,
       [](SshOptions& o, const std::string& v) {
         o.nnodes = static_cast<int>(util::parse_int_in_range(v, 1, 1 << 20, "--nnodes"));
       },
       "Hosts that train (default: all); with more hosts, the first N to join train and the others "
       "stand by as spares to take a lost host's place"},
      {"--hostfile", true, [](SshOptions& o, const std::string& v) { o.hostfile = v; },
       "File of 'HOST [slots=N]' lines (DeepSpeed's format; '#' comments, hostlists)"},
      {"--include", true, [](SshOptions& o, const std::string& v) { o.include = v; },
       "Keep only these hosts or slots: host1@host2:0,1"},
      {"--exclude", true, [](SshOptions& o, const std::string& v) { o.exclude = v; },
       "Leave out these hosts or slots: host3@host1:7"},
      {"--ssh-arg", true, [](SshOptions& o, const std::string& v) { o.ssh_args.push_back(v); },
       "An option for ssh itself, repeatable (e.g. --ssh-arg -F --ssh-arg my_config)"},
      {"--connect-timeout", true,
       [](SshOptions& o, const std::string& v) { o.connect_timeout = seconds_value(v, "--connect-timeout"); },
       "Seconds ssh may take to connect to a host (default 10)"},
      {"--master-addr", true, [](SshOptions& o, const std::string& v) { o.master_addr = v; },
       "Address of node 0 as the other hosts reach it (default: the first host's name)"},
      {"--master-port", true,
       [](SshOptions& o, const std::string& v) {
         o.master_port = static_cast<int>(util::parse_int_in_range(v, 1, 65535, "--master-port"));
       },
       "Port of node 0's rendezvous (default: picked at random in 20000-32767)"},
      {"--env", true, [](SshOptions& o, const std::string& v) { o.env.push_back(v); },
       "Carry NAME (its value here) or NAME=VALUE to every host, repeatable"},
      {"--env-file", true, [](SshOptions& o, const std::string& v) { o.env_file = v; },
       "File of NAME=VALUE lines to set on every host"},
      {"--remote-dlaunch", true, [](SshOptions& o, const std::string& v) { o.remote_dlaunch = v; },
       "Path of dlaunch on the hosts (default: this dlaunch's own path)"},
      {"--host-log-dir", true, [](SshOptions& o, const std::string& v) { o.host_log_dir = v; },
       "Write each host's output to DIR/HOST.log instead of the console"},
      {"--no-preflight", false, [](SshOptions& o, const std::string&) { o.no_preflight = true; },
       "Skip the checks over ssh before the job starts"},
  };
  return options;
}

// dlaunch ssh decides these for every host.
constexpr const char* kSetBySsh[] = {"--nnodes",          "--node-rank",      "--master-addr",
                                     "--master-port",     "--standalone",     "--rdzv-endpoint",
                                     "--rdzv-token",      "--rdzv-token-file", "--rdzv-token-derive",
                                     "--stop-on-stdin-close"};

const OwnOption* find_own(std::string_view name) {
  for (const auto& option : own_options()) {
    if (name == option.name) return &option;
  }
  return nullptr;
}

std::string dashed(std::string_view name) {
  std::string text(name);
  for (std::size_t i = 2; i < text.size(); ++i) {
    if (text[i] == '_') text[i] = '-';
  }
  return text;
}

[[noreturn]] void throw_unknown(std::string_view name) {
  std::vector<std::string> known;
  for (const auto& option : own_options()) known.emplace_back(option.name);
  std::string hint;
  if (auto close = util::closest_match(dashed(name), known))
    hint = fmt::format(" Did you mean '{}'?", *close);
  throw util::UsageError(fmt::format(
      "unknown option '{}' for dlaunch ssh.{} 'dlaunch ssh --help' lists its options; every "
      "'dlaunch run' option is accepted too. Put '--' before a PROGRAM whose name starts with '-'",
      name, hint));
}

void refuse_set_by_ssh(std::string_view name) {
  for (const char* set : kSetBySsh) {
    if (dashed(name) == set)
      throw util::UsageError(fmt::format("{} is set by dlaunch ssh for every host; {}", name,
                                   dashed(name) == "--master-addr" || dashed(name) == "--master-port"
                                       ? "give it before the run options"
                                       : "leave it out"));
  }
}

// Checks the run options' spelling now, on this machine, rather than on
// every host after the ssh connections.
void check_run_args(const std::vector<std::string>& run_args) {
  std::vector<std::string> probe = run_args;
  probe.insert(probe.end(), {"--", "true"});
  launch::parse_run_options(probe, util::Environment(), /*require_program=*/true);
}

}  // namespace

std::optional<SshOptions> parse_ssh_options(const std::vector<std::string>& args) {
  SshOptions options;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      options.command.assign(args.begin() + static_cast<long>(i) + 1, args.end());
      break;
    }
    if (arg == "-h" || arg == "--help") {
      fmt::print("{}", ssh_options_help());
      return std::nullopt;
    }
    if (arg.empty() || arg[0] != '-') {
      options.command.assign(args.begin() + static_cast<long>(i), args.end());
      break;
    }
    std::string name = arg.substr(0, arg.find('='));
    bool inline_value = name.size() < arg.size();
    auto value_of = [&](const std::string& option) {
      if (inline_value) return arg.substr(name.size() + 1);
      if (i + 1 >= args.size()) throw util::UsageError(fmt::format("{} needs a value", option));
      return args[++i];
    };
    if (const OwnOption* own = find_own(dashed(name))) {
      own->apply(options, own->takes_value ? value_of(own->name) : std::string());
      continue;
    }
    refuse_set_by_ssh(name);
    launch::RunOptionKind kind = launch::run_option_kind(arg);
    if (kind == launch::RunOptionKind::kUnknown) throw_unknown(name);
    options.run_args.push_back(arg);
    if (kind == launch::RunOptionKind::kValued && !inline_value) {
      if (i + 1 >= args.size()) throw util::UsageError(fmt::format("{} needs a value", name));
      options.run_args.push_back(args[++i]);
    }
  }
  if (options.command.empty())
    throw util::UsageError("no PROGRAM given to dlaunch ssh. Usage: dlaunch ssh --hosts H1,H2 [options] "
                     "[--] PROGRAM [ARGS...]");
  if (options.hosts.has_value() == options.hostfile.has_value())
    throw util::UsageError("give the hosts with --hosts H1,H2,... or --hostfile FILE (one of the two)");
  check_run_args(options.run_args);
  return options;
}

std::string ssh_options_help() {
  std::string text =
      "usage: dlaunch ssh (--hosts H1,H2,... | --hostfile FILE) [options] [run options] [--] "
      "PROGRAM [ARGS...]\n\n"
      "Starts `dlaunch run` on every host over the system ssh client (your ~/.ssh/config, keys,\n"
      "agent and jump hosts apply), with node ranks in host order and the first host as master.\n"
      "Every host's output comes back here, each line prefixed [HOST:rankN]:. Ctrl-C or SIGTERM\n"
      "stops the job on every host.\n\noptions:\n";
  for (const auto& option : own_options())
    text += fmt::format("  {:<24} {}\n", std::string(option.name) + (option.takes_value ? " X" : ""),
                        option.help);
  text += "  -h, --help               Show this help and exit\n\n"
          "Every `dlaunch run` option (see dlaunch run --help) applies to every host, except the\n"
          "ones dlaunch ssh sets itself: --nnodes, --node-rank, --standalone, --rdzv-endpoint,\n"
          "the rendezvous token options and --stop-on-stdin-close. A host's slots=N sets its\n"
          "--nproc-per-node.\n";
  return text;
}

}  // namespace dlaunch::ssh
