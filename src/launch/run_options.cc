#include "launch/run_options.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <fmt/format.h>

#include "util/command_line.h"
#include "util/error.h"
#include "util/strings.h"

namespace dlaunch::launch {
namespace {

// One row per valued option. NAME is the dashed spelling; the underscore
// spelling torchrun also takes, and the PET_ fallback, are derived from it.
struct ValueOption {
  const char* name;
  const char* short_name;  // "" when none
  std::optional<Setting> RunOptions::*field;
  const char* help;
};

struct FlagOption {
  const char* name;
  const char* short_name;
  bool RunOptions::*field;
  const char* help;
};

constexpr ValueOption kValueOptions[] = {
    {"nnodes", "", &RunOptions::nnodes, "Number of nodes (N, or N:N). Slurm: SLURM_STEP_NUM_NODES"},
    {"nproc-per-node", "", &RunOptions::nproc_per_node,
     "Workers on this node: a number, gpu, cpu or auto. Slurm: GPUs on the node"},
    {"node-rank", "", &RunOptions::node_rank,
     "Rank of this node, 0..nnodes-1 (with spares: 0..nnodes+spare-nodes-1, its place in the job). "
     "Slurm: SLURM_NODEID"},
    {"master-addr", "", &RunOptions::master_addr,
     "Address of node 0 (default 127.0.0.1). Slurm: first host of the node list"},
    {"master-port", "", &RunOptions::master_port,
     "Port of node 0's rendezvous (default 29500). Slurm: derived from the job and step id"},
    {"max-restarts", "", &RunOptions::max_restarts,
     "Restart the whole job up to N times after a failure (default 0)"},
    {"role", "", &RunOptions::role, "Role name of the workers (default 'default')"},
    {"log-dir", "", &RunOptions::log_dir, "Write each worker's output to files under this folder"},
    {"redirects", "r", &RunOptions::redirects,
     "Send worker streams to files only: 0 none, 1 stdout, 2 stderr, 3 both, or per rank 0:1,1:2"},
    {"tee", "t", &RunOptions::tee, "Send worker streams to files and the console (same values as -r)"},
    {"local-ranks-filter", "", &RunOptions::local_ranks_filter,
     "Show console output only of these local ranks (e.g. 0 or 0,2)"},
    {"rdzv-id", "", &RunOptions::rdzv_id, "Job id shared by all nodes (TORCHELASTIC_RUN_ID)"},
    {"rdzv-backend", "", &RunOptions::rdzv_backend,
     "Accepted for torchrun compatibility (static, c10d); dlaunch has its own rendezvous"},
    {"rdzv-endpoint", "", &RunOptions::rdzv_endpoint, "HOST[:PORT] of the rendezvous (node 0)"},
    {"rdzv-conf", "", &RunOptions::rdzv_conf, "key=value,... (join_timeout=SECONDS is honoured)"},
    {"monitor-interval", "", &RunOptions::monitor_interval,
     "Accepted for torchrun compatibility; dlaunch reacts to events, it does not poll"},
    {"start-method", "", &RunOptions::start_method,
     "Accepted for torchrun compatibility; workers are always started with exec"},
    {"local-addr", "", &RunOptions::local_addr, "Address of this node as other nodes reach it"},
    {"shutdown-timeout", "", &RunOptions::shutdown_timeout,
     "Seconds between SIGTERM and SIGKILL when stopping workers (default 30)"},
    {"rdzv-timeout", "", &RunOptions::rdzv_timeout,
     "Seconds to wait for every node to join (default 300)"},
    {"port-range", "", &RunOptions::port_range,
     "LOW-HIGH range for the port derived from the Slurm job id (default 20000-32767)"},
    {"python", "", &RunOptions::python,
     "Interpreter for .py programs (default $PYTHON_EXEC, else python3 in PATH)"},
    {"prefix", "", &RunOptions::prefix,
     "Console line prefix template: {rank} {local_rank} {node_rank} {host} {role} (default "
     "'[rank{rank}]:')"},
    {"rdzv-token", "", &RunOptions::rdzv_token,
     "Secret every node's launcher must prove to join (shows in ps: prefer --rdzv-token-file or "
     "$DLAUNCH_RDZV_TOKEN)"},
    {"rdzv-token-file", "", &RunOptions::rdzv_token_file,
     "File holding the rendezvous secret (readable by you only)"},
    {"heartbeat-timeout", "", &RunOptions::heartbeat_timeout,
     "Seconds of silence after which a node counts as lost and the job stops (default 30)"},
    {"preempt-signal", "", &RunOptions::preempt_signal,
     "Signal that warns of preemption or the time limit (e.g. USR1); forwarded to the workers"},
    {"spare-nodes", "", &RunOptions::spare_nodes,
     "Launchers beyond --nnodes that stand by and take a lost node's place (default 0; in a Slurm "
     "step of more nodes than --nnodes: the difference)"},
    {"min-nodes", "", &RunOptions::min_nodes,
     "Once no spare is left, go on after a lost node with fewer nodes, down to this many (default: "
     "--nnodes, so the job ends)"},
    {"node-fail-limit", "", &RunOptions::node_fail_limit,
     "Bench a node whose workers fail first this many rounds in a row, when a spare can take its "
     "place (default 2; 0: never)"},
    {"exit-code-file", "", &RunOptions::exit_code_file,
     "File node rank 0's launcher writes the job's exit code to when the job ends (dlaunch submit "
     "uses it with spares)"},
    {"hang-timeout", "", &RunOptions::hang_timeout,
     "Seconds without progress on any rank (output, or a new step on $DLAUNCH_PROGRESS_FD) after "
     "which the job is hung: every worker's stack is captured and reported, then the job stops "
     "(exit code 124) (default 0: never)"},
    {"straggler-lag", "", &RunOptions::straggler_lag,
     "Name a rank as a straggler while it is more than this many steps behind the median step "
     "(needs steps on $DLAUNCH_PROGRESS_FD; default 0: off)"},
    {"stack-timeout", "", &RunOptions::stack_timeout,
     "Seconds each stack tool (eu-stack, gdb) may take per worker in a capture (default 5)"},
    {"kill-escaped", "", &RunOptions::kill_escaped,
     "How processes that leave their worker's process group (setsid daemons) are caught: "
     "subreaper (default: the launcher adopts and kills them after each round), cgroup (a cgroup "
     "v2 of the workers) or off"},
};

constexpr FlagOption kFlagOptions[] = {
    {"standalone", "", &RunOptions::standalone,
     "Single node with a local rendezvous on a free port"},
    {"no-python", "", &RunOptions::no_python, "Execute PROGRAM directly, even if it ends in .py"},
    {"module", "m", &RunOptions::module, "Run PROGRAM as a Python module (python -m)"},
    {"run-path", "", &RunOptions::run_path, "Run PROGRAM as a Python file (the default for .py)"},
    {"rdzv-token-derive", "", &RunOptions::rdzv_token_derive,
     "Derive the rendezvous secret from the run id, Slurm job id and user id (guards against "
     "accidents, not attackers)"},
    {"requeue", "", &RunOptions::requeue,
     "After --preempt-signal, requeue the Slurm job (scontrol requeue) once the workers exited"},
    {"allow-uneven", "", &RunOptions::allow_uneven,
     "Let nodes run different numbers of workers (otherwise the rendezvous refuses a mismatch)"},
    {"stop-on-stdin-close", "", &RunOptions::stop_on_stdin_close,
     "Stop the job when standard input closes (dlaunch ssh keeps it open for the job's life)"},
    {"log-dir-required", "", &RunOptions::log_dir_required,
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
}

void configure_app(CLI::App& app, std::vector<std::string>& values, std::vector<bool>& flags) {
  app.prefix_command();  // everything from PROGRAM on belongs to PROGRAM
  app.set_help_flag("-h,--help", "Show this help and exit");
  app.footer(
      "Each option also reads PET_<NAME> (e.g. PET_NPROC_PER_NODE) when not given, as torchrun "
      "does.\nInside a Slurm step every topology option is derived from SLURM_* variables.");
  std::size_t index = 0;
  for (const auto& option : kValueOptions) {
    app.add_option(cli_names(option.name, option.short_name), values[index++], option.help);
  }
  index = 0;
  for (const auto& option : kFlagOptions) {
    // std::vector<bool> has no addressable elements; CLI11 gets a callback instead.
    app.add_flag_callback(cli_names(option.name, option.short_name),
                          [&flags, i = index] { flags[i] = true; }, option.help);
    ++index;
  }
}

// With prefix_command() CLI11 hands an unknown option over as PROGRAM;
// a PROGRAM starting with '-' must come after "--", so this is a typo.
[[noreturn]] void throw_unknown_option(const std::string& given, const char* command) {
  std::string name = given.substr(0, given.find('='));
  std::vector<std::string> known;
  for (const auto& option : kValueOptions) known.push_back(std::string("--") + option.name);
  for (const auto& option : kFlagOptions) known.push_back(std::string("--") + option.name);
  std::string dashed = name;
  std::replace(dashed.begin(), dashed.end(), '_', '-');
  std::string hint;
  if (auto close = util::closest_match(dashed, known)) hint = fmt::format(" Did you mean '{}'?", *close);
  throw util::UsageError(fmt::format(
      "unknown option '{}' for {}.{} Put '--' before a PROGRAM whose name starts with '-'; "
      "'{} --help' lists the options.",
      name, command, hint, command));
}

}  // namespace

std::optional<RunOptions> parse_run_options(const std::vector<std::string>& args,
                                            const util::Environment& environment,
                                            bool require_program, const RunOptionsCommand& command) {
  CLI::App app(command.description, command.name);
  std::vector<std::string> values(std::size(kValueOptions));
  std::vector<bool> flags(std::size(kFlagOptions), false);
  configure_app(app, values, flags);

  if (!util::parse_command_line(app, args, command.name)) return std::nullopt;

  RunOptions options;
  std::vector<std::string> given;
  std::size_t index = 0;
  for (const auto& option : kValueOptions) {
    if (app.count(std::string("--") + option.name) > 0) {
      options.*option.field = Setting{values[index], std::string("--") + option.name};
      given.push_back(option.name);
    }
    ++index;
  }
  index = 0;
  for (const auto& option : kFlagOptions) {
    if (flags[index++]) {
      options.*option.field = true;
      given.push_back(option.name);
    }
  }
  apply_environment_fallbacks(options, given, environment);

  auto program = util::program_after_options(app);
  if (!program) throw_unknown_option(app.remaining().front(), command.name);
  options.command = std::move(*program);
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

const ValueOption* find_value_option(std::string_view arg) {
  for (const auto& option : kValueOptions) {
    if (spells(arg, option.name, option.short_name)) return &option;
  }
  return nullptr;
}

}  // namespace

RunOptionKind run_option_kind(std::string_view arg) {
  if (find_value_option(arg)) return RunOptionKind::kValued;
  for (const auto& option : kFlagOptions) {
    if (spells(arg, option.name, option.short_name)) return RunOptionKind::kFlag;
  }
  return RunOptionKind::kUnknown;
}

std::optional<std::string> run_option_value(const std::vector<std::string>& args,
                                            std::string_view name) {
  std::optional<std::string> found;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") break;
    const ValueOption* option = find_value_option(arg);
    if (!option) continue;
    std::optional<std::string> value;
    if (auto equals = arg.find('='); equals != std::string::npos) value = arg.substr(equals + 1);
    else if (i + 1 < args.size()) value = args[++i];
    if (name == std::string("--") + option->name) found = value;
  }
  return found;
}

std::string run_options_help() {
  CLI::App app("Start and supervise the workers of one node (torchrun-compatible)", "dlaunch run");
  std::vector<std::string> values(std::size(kValueOptions));
  std::vector<bool> flags(std::size(kFlagOptions), false);
  configure_app(app, values, flags);
  return app.help();
}

}  // namespace dlaunch::launch
