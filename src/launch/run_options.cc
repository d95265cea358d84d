#include "launch/run_options.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <fmt/format.h>

#include "launch/job_options.h"
#include "util/command_line.h"
#include "util/command_line_spec.h"
#include "util/error.h"
#include "util/strings.h"

namespace dlaunch::launch {
namespace {

// One row per valued option. NAME is the dashed spelling; the underscore
// spelling torchrun also takes, and the PET_ fallback, are derived from it.
// GROUP is its heading in the help, PLACEHOLDER what its value looks like
// (util/command_line.h).
struct ValueOption {
  const char* name;
  const char* short_name;  // "" when none
  std::optional<Setting> RunOptions::*field;
  const char* group;
  const char* placeholder;
  const char* help;
};

struct FlagOption {
  const char* name;
  const char* short_name;
  bool RunOptions::*field;
  const char* group;
  const char* help;
};

using namespace option_group;

// The headings in the order the help shows them.
constexpr const char* kGroups[] = {kTopology, kWorkers,    kOutput,       kReliability,
                                   kHangs,    kRendezvous, kCompatibility};

constexpr ValueOption kValueOptions[] = {
    {"nnodes", "", &RunOptions::nnodes, kTopology, "N",
     "Number of nodes (N, or N:N). Slurm: SLURM_STEP_NUM_NODES"},
    {"nproc-per-node", "", &RunOptions::nproc_per_node, kTopology, "N|gpu|cpu|auto",
     "Workers on this node: a number, gpu, cpu or auto. Slurm: GPUs on the node"},
    {"node-rank", "", &RunOptions::node_rank, kTopology, "N",
     "Rank of this node, 0..nnodes-1 (with spares: 0..nnodes+spare-nodes-1, its place in the job). "
     "Slurm: SLURM_NODEID"},
    {"master-addr", "", &RunOptions::master_addr, kTopology, "HOST",
     "Address of node 0 (default 127.0.0.1). Slurm: first host of the node list"},
    {"master-port", "", &RunOptions::master_port, kTopology, "PORT",
     "Port of node 0's rendezvous (default 29500). Slurm: derived from the job and step id"},
    {"role", "", &RunOptions::role, kWorkers, "NAME", "Role name of the workers (default 'default')"},
    {"log-dir", "", &RunOptions::log_dir, kOutput, "DIR",
     "Write each worker's output to files under this folder"},
    {"redirects", "r", &RunOptions::redirects, kOutput, "0|1|2|3|MAP",
     "Send worker streams to files only: 0 none, 1 stdout, 2 stderr, 3 both, or per rank 0:1,1:2"},
    {"tee", "t", &RunOptions::tee, kOutput, "0|1|2|3|MAP",
     "Send worker streams to files and the console (same values as -r)"},
    {"local-ranks-filter", "", &RunOptions::local_ranks_filter, kOutput, "LIST",
     "Show console output only of these local ranks (e.g. 0 or 0,2)"},
    {"log-line-prefix-template", "", &RunOptions::log_line_prefix_template, kOutput, "TEMPLATE",
     "torchrun's console line prefix: ${rank} ${local_rank} ${role_name}, and ${hostname} (or use --prefix)"},
    {"logs-specs", "", &RunOptions::logs_specs, kCompatibility, "NAME",
     "Accepted for torchrun compatibility; dlaunch files worker logs under --log-dir itself"},
    {"console-overflow", "", &RunOptions::console_overflow, kOutput, "block|drop",
     "When the console takes output slower than the workers write it (srun, ssh, a slow pipe): "
     "block (default: the workers' writes wait, as on a slow terminal; nothing is lost) or drop "
     "(whole lines are dropped and counted; the workers never wait)"},
    {"rdzv-id", "", &RunOptions::rdzv_id, kRendezvous, "ID",
     "Job id shared by all nodes (TORCHELASTIC_RUN_ID)"},
    {"rdzv-backend", "", &RunOptions::rdzv_backend, kCompatibility, "static|c10d",
     "Accepted for torchrun compatibility; dlaunch has its own rendezvous"},
    {"rdzv-endpoint", "", &RunOptions::rdzv_endpoint, kRendezvous, "HOST[:PORT]",
     "Where the rendezvous is (node 0)"},
    {"rdzv-conf", "", &RunOptions::rdzv_conf, kRendezvous, "KEY=VALUE,...",
     "Rendezvous settings (join_timeout=SECONDS is honoured)"},
    {"monitor-interval", "", &RunOptions::monitor_interval, kCompatibility, "SECONDS",
     "Accepted for torchrun compatibility; dlaunch reacts to events, it does not poll"},
    {"start-method", "", &RunOptions::start_method, kCompatibility, "spawn|fork|forkserver",
     "Accepted for torchrun compatibility; workers are always started with exec"},
    {"local-addr", "", &RunOptions::local_addr, kTopology, "HOST",
     "Address of this node as other nodes reach it"},
    {"shutdown-timeout", "", &RunOptions::shutdown_timeout, kReliability, "SECONDS",
     "Seconds between SIGTERM and SIGKILL when stopping workers (default 30)"},
    {"port-range", "", &RunOptions::port_range, kRendezvous, "LOW-HIGH",
     "Range for the port derived from the Slurm job id (default 20000-32767)"},
    {"python", "", &RunOptions::python, kWorkers, "FILE",
     "Interpreter for .py programs (default $PYTHON_EXEC, else python3 in PATH)"},
    {"prefix", "", &RunOptions::prefix, kOutput, "TEMPLATE",
     "Console line prefix: {rank} {local_rank} {node_rank} {host} {role} (default "
     "'[rank{rank}]:')"},
    {"rdzv-token", "", &RunOptions::rdzv_token, kRendezvous, "SECRET",
     "Secret every node's launcher must prove to join (shows in ps: prefer --rdzv-token-file or "
     "$DLAUNCH_RDZV_TOKEN)"},
    {"rdzv-token-file", "", &RunOptions::rdzv_token_file, kRendezvous, "FILE",
     "File holding the rendezvous secret (readable by you only)"},
    {"preempt-signal", "", &RunOptions::preempt_signal, kReliability, "SIG",
     "Signal that warns of preemption or the time limit (e.g. USR1); forwarded to the workers"},
    {"spare-nodes", "", &RunOptions::spare_nodes, kReliability, "N",
     "Launchers beyond --nnodes that stand by and take a lost node's place (default 0; in a Slurm "
     "step of more nodes than --nnodes: the difference)"},
    {"exit-code-file", "", &RunOptions::exit_code_file, kOutput, "FILE",
     "File the launcher that speaks for the job writes the job's exit code to as soon as its verdict "
     "is in (dlaunch submit's job script ends the step by it)"},
    {"end-job-after", "", &RunOptions::end_job_after, kReliability, "SECONDS",
     "In a Slurm batch job: when the launcher that speaks for the job is not on the batch host "
     "(slot 0's), it cancels the job this long after its verdict unless the batch script ended it "
     "first (the batch host was lost); dlaunch submit sets it"},
    {"bench-record", "", &RunOptions::bench_record, kReliability, "FILE",
     "With --requeue: JSON file where node 0 keeps the hosts dlaunch benched, and the requeued Slurm "
     "job excludes those still in their cooldown (dlaunch submit --requeue sets it)"},
    {"bench-cooldown", "", &RunOptions::bench_cooldown, kReliability, "DURATION",
     "How long a benched host stays excluded after a requeue, doubled each further time it is "
     "benched, at most 24h (e.g. 90s, 30m, 2h; default 30m)"},
    {"kill-escaped", "", &RunOptions::kill_escaped, kReliability, "subreaper|cgroup|off",
     "How processes that leave their worker's process group (setsid daemons) are caught: "
     "subreaper (default: the launcher adopts and kills them after each round), cgroup (a cgroup "
     "v2 of the workers) or off"},
};

constexpr FlagOption kFlagOptions[] = {
    {"standalone", "", &RunOptions::standalone, kTopology,
     "Single node with a local rendezvous on a free port"},
    {"no-python", "", &RunOptions::no_python, kWorkers,
     "Execute PROGRAM directly, even if it ends in .py"},
    {"module", "m", &RunOptions::module, kWorkers, "Run PROGRAM as a Python module (python -m)"},
    {"run-path", "", &RunOptions::run_path, kWorkers,
     "Run PROGRAM as a Python file (the default for .py)"},
    {"rdzv-token-derive", "", &RunOptions::rdzv_token_derive, kRendezvous,
     "Derive the rendezvous secret from the run id, Slurm job id and user id (guards against "
     "accidents, not attackers)"},
    {"requeue", "", &RunOptions::requeue, kReliability,
     "After --preempt-signal, requeue the Slurm job (scontrol requeue) once the workers exited"},
    {"allow-uneven", "", &RunOptions::allow_uneven, kTopology,
     "Let nodes run different numbers of workers (otherwise the rendezvous refuses a mismatch)"},
    {"stop-on-stdin-close", "", &RunOptions::stop_on_stdin_close, kReliability,
     "Stop the job when standard input closes (dlaunch ssh keeps it open for the job's life)"},
    {"check-only", "", &RunOptions::check_only, kWorkers,
     "Check the options as this node would run them (the same errors and exit code), print one line with "
     "the nodes, workers and program they resolve to, and start nothing"},
    {"log-dir-required", "", &RunOptions::log_dir_required, kOutput,
     "Stop the job when a worker's log file cannot be written (default: say so, show the output "
     "on the console and go on)"},
};

std::string underscored(std::string_view name) {
  std::string result(name);
  for (char& c : result) c = (c == '-') ? '_' : c;
  return result;
}

std::string pet_variable(std::string_view name) { return "PET_" + util::to_upper(underscored(name)); }

std::string cli_names(const char* name, const char* short_name) {
  std::string names = fmt::format("--{}", name);
  if (underscored(name) != name) names += fmt::format(",--{}", underscored(name));
  if (*short_name != '\0') names = fmt::format("-{},{}", short_name, names);
  return names;
}

bool parse_env_flag(const std::string& variable, const std::string& value) {
  if (value == "1" || value == "true" || value == "True") return true;
  if (value == "0" || value == "false" || value == "False") return false;
  throw util::InputError(fmt::format("{} must be 1 or 0 (or true/false), got '{}'", variable, value));
}

// Applies PET_<NAME> to every option the command line left unset.
void apply_environment_fallbacks(RunOptions& options, const std::vector<std::string>& given,
                                 const util::Environment& environment) {
  auto was_given = [&](const char* name) {
    return std::find(given.begin(), given.end(), name) != given.end();
  };
  for (const auto& option : kValueOptions) {
    if (was_given(option.name)) continue;
    std::string variable = pet_variable(option.name);
    if (auto value = environment.get(variable)) options.*option.field = Setting{*value, variable};
  }
  for (const auto& option : kFlagOptions) {
    if (was_given(option.name)) continue;
    std::string variable = pet_variable(option.name);
    if (auto value = environment.get(variable))
      options.*option.field = parse_env_flag(variable, *value);
  }
  for (const auto& option : job_options()) {
    if (was_given(option.name)) continue;
    std::string variable = pet_variable(option.name);
    auto value = environment.get(variable);
    if (!value) continue;
    // A flag set to 0 in the environment is a flag not given.
    if (option.is_flag() && !parse_env_flag(variable, *value)) continue;
    options.job[option.name] = Setting{option.is_flag() ? "true" : *value, variable};
  }
}

bool left_out(const char* name, const std::vector<std::string>& leave_out) {
  return std::find(leave_out.begin(), leave_out.end(), std::string("--") + name) != leave_out.end();
}

// The options are added without variables: run_options_from reads them
// back from APP, so ssh's and env's parsers can hold them too.
void add_group(CLI::App& app, std::string_view group, const std::vector<std::string>& leave_out) {
  for (const auto& option : kValueOptions) {
    if (group != option.group || left_out(option.name, leave_out)) continue;
    // Given twice, the same value is taken once and different values are
    // refused (util/option_rules.h), where torchrun silently takes the last.
    app.add_option(cli_names(option.name, option.short_name))
        ->description(option.help)
        ->group(option.group)
        ->type_name(option.placeholder)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  }
  for (const auto& option : kFlagOptions) {
    if (group != option.group || left_out(option.name, leave_out)) continue;
    app.add_flag(cli_names(option.name, option.short_name))->description(option.help)->group(option.group);
  }
  for (const auto& option : job_options()) {
    if (group != option.group || left_out(option.name, leave_out)) continue;
    if (option.is_flag()) {
      app.add_flag(cli_names(option.name, ""))->description(option.help)->group(option.group);
    } else {
      app.add_option(cli_names(option.name, ""))
          ->description(option.help)
          ->group(option.group)
          ->type_name(option.placeholder)
          ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    }
  }
}

// Real command lines, each of which works as written.
std::vector<util::HelpExample> examples_of(const RunOptionsCommand& command) {
  if (std::string_view(command.name) == kExecCommand.name)
    return {
        {"srun --nodes 2 --ntasks-per-node 4 --gpus-per-node 4 dlaunch exec train.py --lr 0.1",
         "one task per GPU: each runs train.py with RANK, LOCAL_RANK, WORLD_SIZE and MASTER_ADDR set"},
        {"srun -N 2 --ntasks-per-node 2 dlaunch exec --no-python ./all_reduce_bench",
         "a native program, started in place of the task"},
        {"srun -N 1 -n 4 dlaunch exec -m mypackage.train --epochs 3",
         "a Python module, as python -m would run it"},
        {"dlaunch submit --launch task --nodes 2 --gpus-per-node 4 train.py",
         "the same from dlaunch submit: srun starts dlaunch exec in one task per GPU"},
    };
  return {
      {"dlaunch run --nproc-per-node 4 train.py --lr 0.1", "one machine, four workers"},
      {"srun --nodes 2 --ntasks-per-node 1 dlaunch run train.py",
       "inside a Slurm step: every topology option comes from Slurm"},
      {"dlaunch run --nnodes 2 --node-rank 0 --master-addr node1 --nproc-per-node 8 train.py",
       "node 0 of a two-node job started by hand (node 1 runs the same with --node-rank 1)"},
      {"dlaunch run --nproc-per-node 2 --log-dir logs --tee 3 --max-restarts 2 train.py",
       "output to the console and to logs/, and up to two restarts after a failure"},
      {"dlaunch run --standalone --nproc-per-node 4 --hang-timeout 600 -m mypackage.train",
       "a module; every worker's stack is reported if no rank progresses for ten minutes"},
  };
}

void configure_app(CLI::App& app, const RunOptionsCommand& command) {
  app.prefix_command();  // everything from PROGRAM on belongs to PROGRAM
  util::set_usage(app, fmt::format("{} [options] [--] PROGRAM [ARGS...]", command.name));
  app.footer(
      "PROGRAM ending in .py runs with Python; -m runs a module; anything else is executed.\n"
      "Each option also takes torchrun's underscore spelling (--nproc_per_node) and reads\n"
      "PET_<NAME> (e.g. PET_NPROC_PER_NODE) when not given, as torchrun does.\n"
      "Inside a Slurm step every topology option is derived from SLURM_* variables.");
  add_run_options(app);
  util::finish_help(app, examples_of(command));
}

}  // namespace

void add_run_options(CLI::App& app, const std::vector<std::string>& leave_out) {
  for (const char* group : kGroups) add_group(app, group, leave_out);
}

RunOptions run_options_from(const CLI::App& app, const util::Environment& environment) {
  RunOptions options;
  std::vector<std::string> given;
  for (const auto& option : kValueOptions) {
    std::string name = std::string("--") + option.name;
    if (app.count(name) == 0) continue;
    options.*option.field = Setting{app.get_option(name)->as<std::string>(), name};
    given.push_back(option.name);
  }
  for (const auto& option : kFlagOptions) {
    if (app.count(std::string("--") + option.name) == 0) continue;
    options.*option.field = true;
    given.push_back(option.name);
  }
  for (const auto& option : job_options()) {
    std::string name = std::string("--") + option.name;
    if (app.count(name) == 0) continue;
    options.job[option.name] = Setting{option.is_flag() ? "true" : app.get_option(name)->as<std::string>(), name};
    given.push_back(option.name);
  }
  apply_environment_fallbacks(options, given, environment);
  options.command = util::program_after_options(app);
  return options;
}

std::optional<RunOptions> parse_run_options(const std::vector<std::string>& args,
                                            const util::Environment& environment,
                                            bool require_program, const RunOptionsCommand& command) {
  CLI::App app(command.description, command.name);
  configure_app(app, command);
  if (!util::parse_command_line(app, args, command.name)) return std::nullopt;
  RunOptions options = run_options_from(app, environment);
  if (options.command.empty() && require_program)
    throw util::UsageError(fmt::format("no PROGRAM given to {}. Usage: {} [options] [--] PROGRAM [ARGS...]",
                                       command.name, command.name));
  return options;
}

namespace {

// Whether ARG ("--nproc_per_node=4", "-r") spells the option NAME/SHORT_NAME.
bool spells(std::string_view arg, const char* name, const char* short_name) {
  std::string_view given = arg.substr(0, arg.find('='));
  return given == std::string("--") + name || given == "--" + underscored(name) ||
         (*short_name != '\0' && given == std::string("-") + short_name);
}

// The dashed name of the valued option ARG spells; nullptr when none.
const char* valued_option_name(std::string_view arg) {
  for (const auto& option : kValueOptions) {
    if (spells(arg, option.name, option.short_name)) return option.name;
  }
  for (const auto& option : job_options()) {
    if (!option.is_flag() && spells(arg, option.name, "")) return option.name;
  }
  return nullptr;
}

bool spells_flag(std::string_view arg) {
  for (const auto& option : kFlagOptions) {
    if (spells(arg, option.name, option.short_name)) return true;
  }
  for (const auto& option : job_options()) {
    if (option.is_flag() && spells(arg, option.name, "")) return true;
  }
  return false;
}

}  // namespace

RunOptionKind run_option_kind(std::string_view arg) {
  if (valued_option_name(arg)) return RunOptionKind::kValued;
  if (spells_flag(arg)) return RunOptionKind::kFlag;
  return RunOptionKind::kUnknown;
}

std::optional<std::string> run_option_value(const std::vector<std::string>& args,
                                            std::string_view name) {
  std::optional<std::string> found;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") break;
    const char* option = valued_option_name(arg);
    if (!option) continue;
    std::optional<std::string> value;
    if (auto equals = arg.find('='); equals != std::string::npos) value = arg.substr(equals + 1);
    else if (i + 1 < args.size()) value = args[++i];
    if (name == std::string("--") + option) found = value;
  }
  return found;
}

std::string run_options_help(const RunOptionsCommand& command) {
  CLI::App app(command.description, command.name);
  configure_app(app, command);
  return app.help();
}

namespace {

util::CommandLineSpec describe_options_of(const RunOptionsCommand& command) {
  CLI::App app(command.description, command.name);
  configure_app(app, command);
  return util::describe_command_line(app);
}

}  // namespace

util::CommandLineSpec describe_run_options() { return describe_options_of({}); }

util::CommandLineSpec describe_exec_options() { return describe_options_of(kExecCommand); }

}  // namespace dlaunch::launch
