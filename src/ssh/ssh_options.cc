#include "ssh/ssh_options.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <functional>
#include <iterator>
#include <memory>

#include "launch/run_options.h"
#include "util/command_line.h"
#include "util/environment.h"
#include "util/error.h"
#include "util/missing_value.h"
#include "util/option_rules.h"
#include "util/strings.h"

namespace dlaunch::ssh {
namespace {

using Apply = std::function<void(SshOptions&, const std::string&)>;

// One of dlaunch ssh's own options. PLACEHOLDER is what its value looks
// like in the help (nullptr: a flag); GROUP its heading there.
struct OwnOption {
  const char* name;
  const char* placeholder;
  const char* group;
  Apply apply;
  const char* help;
  bool repeatable = false;  // each use adds to a list (util/option_rules.h lets it repeat)
};

// The value as typed, kept in FIELD.
Apply text_in(std::optional<std::string> SshOptions::*field) {
  return [field](SshOptions& options, const std::string& value) { options.*field = value; };
}

// The value as typed, kept in FIELD, once: a second --hosts would drop the
// hosts of the first without a word.
Apply once_in(std::optional<std::string> SshOptions::*field, const char* option) {
  return [field, option](SshOptions& options, const std::string& value) {
    if (options.*field)
      throw util::UsageError(fmt::format("{} is given twice ('{}', then '{}'); dlaunch ssh takes one list: give "
                                         "all of it in one {} (e.g. {} {},{})",
                                         option, *(options.*field), value, option, option, *(options.*field),
                                         value));
    options.*field = value;
  };
}

// A repeatable option: each value is added to FIELD.
Apply each_in(std::vector<std::string> SshOptions::*field) {
  return [field](SshOptions& options, const std::string& value) { (options.*field).push_back(value); };
}

// A whole number from LOWEST to HIGHEST, kept in FIELD; OPTION names it in
// the UsageError for any other value.
Apply number_in(std::optional<int> SshOptions::*field, int lowest, int highest, const char* option) {
  return [=](SshOptions& options, const std::string& value) {
    options.*field = static_cast<int>(util::parse_int_in_range(value, lowest, highest, option));
  };
}

int seconds_value(const std::string& value, const char* option) {
  return static_cast<int>(util::parse_int_in_range(value, 1, 3600, option));
}

const std::vector<OwnOption>& own_options() {
  static const std::vector<OwnOption> options = {
      {"--hosts", "HOSTS", "Hosts", once_in(&SshOptions::hosts, "--hosts"),
       "Hosts in node-rank order: h1,h2 or hostlists such as gpu[01-04]"},
      {"--nnodes", "N", "Hosts", number_in(&SshOptions::nnodes, 1, 1 << 20, "--nnodes"),
       "Hosts that train (default: all); with more hosts, the first N to join train and the others "
       "stand by as spares to take a lost host's place"},
      {"--spare-nodes", "N", "Hosts", number_in(&SshOptions::spare_nodes, 0, 1 << 20, "--spare-nodes"),
       "Hosts that stand by to take a lost host's place (default: the hosts beyond --nnodes); the "
       "others train"},
      {"--hostfile", "FILE", "Hosts", once_in(&SshOptions::hostfile, "--hostfile"),
       "File of 'HOST [slots=N]' lines (DeepSpeed's format; '#' comments, hostlists)"},
      {"--include", "HOSTS", "Hosts", text_in(&SshOptions::include),
       "Keep only these hosts or slots: host1@host2:0,1"},
      {"--exclude", "HOSTS", "Hosts", text_in(&SshOptions::exclude),
       "Leave out these hosts or slots: host3@host1:7"},
      {"--ssh-arg", "ARG", "SSH", each_in(&SshOptions::ssh_args),
       "An option for ssh itself, repeatable (e.g. --ssh-arg -F --ssh-arg my_config)", true},
      {"--connect-timeout", "SECONDS", "SSH",
       [](SshOptions& o, const std::string& v) { o.connect_timeout = seconds_value(v, "--connect-timeout"); },
       "Seconds ssh may take to connect to a host (default 10)"},
      {"--master-addr", "HOST", "Rendezvous", text_in(&SshOptions::master_addr),
       "Address of node 0 as the other hosts reach it (default: the first host's name)"},
      {"--master-port", "PORT", "Rendezvous", number_in(&SshOptions::master_port, 1, 65535, "--master-port"),
       "Port of node 0's rendezvous (default: picked at random in 20000-32767)"},
      {"--env", "NAME[=VALUE]", "Environment", each_in(&SshOptions::env),
       "Carry NAME (its value here) or NAME=VALUE to every host, repeatable", true},
      {"--env-file", "FILE", "Environment", text_in(&SshOptions::env_file),
       "File of NAME=VALUE lines to set on every host"},
      {"--remote-dlaunch", "FILE", "SSH", text_in(&SshOptions::remote_dlaunch),
       "Path of dlaunch on the hosts (default: this dlaunch's own path)"},
      {"--host-log-dir", "DIR", "Output", text_in(&SshOptions::host_log_dir),
       "Write each host's output to DIR/HOST.log instead of the console"},
      {"--no-preflight", nullptr, "SSH", [](SshOptions& o, const std::string&) { o.no_preflight = true; },
       "Skip the checks over ssh before the job starts"},
  };
  return options;
}

// dlaunch ssh decides these for every host.
// (--nnodes and --spare-nodes are its own options: how many hosts train.)
constexpr const char* kSetBySsh[] = {"--nnodes",          "--node-rank",      "--master-addr",
                                     "--master-port",     "--standalone",     "--rdzv-endpoint",
                                     "--rdzv-token",      "--rdzv-token-file", "--rdzv-token-derive",
                                     "--stop-on-stdin-close", "--spare-nodes"};

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

// The CLI::App that shows dlaunch ssh's help and describes its command
// line; the words themselves are read by parse_ssh_options, which passes
// the run options on to every host as typed.
void configure_help(CLI::App& app) {
  app.prefix_command();
  util::set_usage(app, "dlaunch ssh (--hosts H1,H2,... | --hostfile FILE) [options] [run options] [--] "
                       "PROGRAM [ARGS...]");
  for (const auto& own : own_options()) {
    CLI::Option* option = own.placeholder ? app.add_option(own.name)->type_name(own.placeholder)
                                          : app.add_flag(own.name);
    option->description(own.help)->group(own.group);
    if (own.repeatable) option->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  }
  launch::add_run_options(app, std::vector<std::string>(std::begin(kSetBySsh), std::end(kSetBySsh)));
  app.footer("Every dlaunch run option above applies to every host; dlaunch ssh sets --nnodes,\n"
             "--node-rank, --standalone, --rdzv-endpoint, the rendezvous token and\n"
             "--stop-on-stdin-close itself. A host's slots=N sets its --nproc-per-node.");
  util::finish_help(
      app, {
               {"dlaunch ssh --hosts node1,node2 --nproc-per-node 4 train.py --lr 0.1",
                "two hosts, four workers each; node1 is node 0 and the master"},
               {"dlaunch ssh --hostfile hosts.txt --env NCCL_DEBUG=INFO train.py",
                "the hosts and their slots from a DeepSpeed-style hostfile, one variable carried along"},
               {"dlaunch ssh --hosts 'gpu[01-04]' --nnodes 3 --max-restarts 2 train.py",
                "four hosts: three train, the fourth stands by to replace a lost one"},
               {"dlaunch ssh --hosts a,b --ssh-arg -F --ssh-arg ~/.ssh/cluster --host-log-dir logs train.py",
                "an ssh config of its own; each host's output in logs/HOST.log"},
           });
}

std::unique_ptr<CLI::App> help_app() {
  auto app = std::make_unique<CLI::App>("Starts dlaunch run on every host over the system ssh client (your ~/.ssh/config, keys, "
               "agent and jump hosts apply), with node ranks in host order and the first host as "
               "master. Every host's output comes back here, each line prefixed [HOST:rankN]:. Ctrl-C "
               "or SIGTERM stops the job on every host.",
               "dlaunch ssh");
  configure_help(*app);
  return app;
}

[[noreturn]] void throw_unknown(std::string_view name) {
  util::throw_unknown_option(*help_app(), name, "dlaunch ssh");
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
  // The help's parser knows every option dlaunch ssh takes, its own and the
  // run options it passes on: a value left out is refused as every
  // command refuses it, and so is a flag's value (util/option_rules.h).
  // USES point into APP's options: APP lives as long as they are read.
  auto app = help_app();
  auto uses = util::read_option_uses(*app, args, "dlaunch ssh");
  util::refuse_flag_values(uses, "dlaunch ssh");
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
      own->apply(options, own->placeholder ? value_of(own->name) : std::string());
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
  // After the walk above, whose own refusal of a second host list says how
  // to give one; any other option given twice is refused as everywhere.
  util::refuse_conflicting_repeats(uses, "dlaunch ssh");
  check_run_args(options.run_args);
  return options;
}

std::string ssh_options_help() { return help_app()->help(); }

util::CommandLineSpec describe_ssh_options() { return util::describe_command_line(*help_app()); }

}  // namespace dlaunch::ssh
