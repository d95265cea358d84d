// The command line of `dlaunch run`, as the user typed it.
//
// Values stay raw strings tagged with where they came from (a flag or its
// PET_* fallback); launch/launch_config turns them into checked numbers, so
// this file knows about spelling and nothing about meaning.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/command_line_spec.h"
#include "util/environment.h"
#include "util/sourced.h"

namespace CLI {
class App;
}

namespace dlaunch::launch {

using Setting = util::Sourced<std::string>;

struct RunOptions {
  // torchrun's options (both spellings accepted: --nproc-per-node, --nproc_per_node).
  std::optional<Setting> nnodes;
  std::optional<Setting> nproc_per_node;
  std::optional<Setting> node_rank;
  std::optional<Setting> master_addr;
  std::optional<Setting> master_port;
  std::optional<Setting> role;
  std::optional<Setting> log_dir;
  std::optional<Setting> redirects;
  std::optional<Setting> tee;
  std::optional<Setting> local_ranks_filter;
  std::optional<Setting> rdzv_id;
  std::optional<Setting> rdzv_backend;
  std::optional<Setting> rdzv_endpoint;
  std::optional<Setting> rdzv_conf;
  std::optional<Setting> monitor_interval;  // accepted for compatibility; supervision is event-driven
  std::optional<Setting> start_method;      // accepted for compatibility; workers are always exec'd
  std::optional<Setting> local_addr;
  std::optional<Setting> log_line_prefix_template;  // torchrun's ${rank} form of --prefix
  std::optional<Setting> logs_specs;                // accepted for compatibility; logs go under --log-dir
  bool standalone = false;
  bool no_python = false;
  bool module = false;
  bool run_path = false;

  // dlaunch's own.
  std::optional<Setting> shutdown_timeout;
  std::optional<Setting> port_range;
  std::optional<Setting> python;
  std::optional<Setting> prefix;
  std::optional<Setting> rdzv_token;       // the secret itself (visible in ps: prefer the file or env)
  std::optional<Setting> rdzv_token_file;  // a file holding the secret
  bool rdzv_token_derive = false;          // opt in to a token derived from the job's identity
  std::optional<Setting> preempt_signal;   // the signal that warns of preemption (USR1, ...)
  bool requeue = false;                    // requeue the Slurm job after a preemption signal
  bool allow_uneven = false;               // nodes may run different numbers of workers
  bool stop_on_stdin_close = false;        // dlaunch ssh: a closed session stops this node
  std::optional<Setting> kill_escaped;     // subreaper, cgroup or off
  std::optional<Setting> console_overflow;  // block or drop
  bool log_dir_required = false;           // a log file that cannot be written stops the job
  bool check_only = false;                 // parse and resolve, say what, start nothing
  std::optional<Setting> spare_nodes;      // launchers beyond --nnodes that stand by
  std::optional<Setting> exit_code_file;   // the launcher that speaks for the job writes its exit code here
  std::optional<Setting> end_job_after;    // a Slurm batch job whose batch host was lost is cancelled this long after its verdict
  std::optional<Setting> bench_record;     // --requeue: the record of benched hosts the requeued job excludes
  std::optional<Setting> bench_cooldown;   // how long a benched host stays excluded the first time

  // The options that set the job's shared settings (launch/job_options.h),
  // by name ("hang-timeout"), as given; a flag's value is "true".
  std::map<std::string, Setting> job;

  // PROGRAM [ARGS...], untouched.
  std::vector<std::string> command;
};

// Which command parses run options: its name in errors and help, and its help's first line.
struct RunOptionsCommand {
  const char* name = "dlaunch run";
  const char* description = "Start and supervise the workers of one node (torchrun-compatible)";
};
inline constexpr RunOptionsCommand kExecCommand{
    "dlaunch exec",
    "Inside an srun task (one per GPU): set torchrun's variables (RANK, LOCAL_RANK, WORLD_SIZE, "
    "MASTER_ADDR, ...) from Slurm's and run PROGRAM in place. Takes dlaunch run's options; those "
    "about supervising workers do not apply"};

// Parses ARGS (after "dlaunch run"); options not given on the command line
// fall back to PET_<NAME> in ENVIRONMENT, as torchrun does. Throws
// UsageError for unknown options or a missing PROGRAM. Returns nullopt
// when --help was printed. `dlaunch env` passes REQUIRE_PROGRAM false;
// `dlaunch exec` passes kExecCommand, so its help and errors are its own.
std::optional<RunOptions> parse_run_options(const std::vector<std::string>& args,
                                            const util::Environment& environment,
                                            bool require_program = true,
                                            const RunOptionsCommand& command = {});

// Adds dlaunch run's options to APP under their headings (Topology,
// Workers, Output, ...), with typed placeholders, leaving out those named in
// LEAVE_OUT ("--nnodes"). For parsers that take run options beside their
// own (dlaunch env, dlaunch ssh's help).
void add_run_options(CLI::App& app, const std::vector<std::string>& leave_out = {});

// The run options APP parsed (it holds add_run_options' options), each
// option not given falling back to PET_<NAME> in ENVIRONMENT; the command
// is what APP left over after the options.
RunOptions run_options_from(const CLI::App& app, const util::Environment& environment);

// What ARG ("--nproc-per-node", "--nproc_per_node=4", "-r", "--standalone")
// is to dlaunch run: a valued option (its value is the next word unless
// given with '='), a flag, or not one of its options.
enum class RunOptionKind { kValued, kFlag, kUnknown };
RunOptionKind run_option_kind(std::string_view arg);

// The value ARGS (dlaunch run options, as given) set for the valued option
// NAME ("--shutdown-timeout"; either spelling and --name=value count), the
// last one when given twice; nullopt when not given.
std::optional<std::string> run_option_value(const std::vector<std::string>& args,
                                            std::string_view name);

// The help text of `dlaunch run` (or of COMMAND: exec).
std::string run_options_help(const RunOptionsCommand& command = {});

// The options of `dlaunch run` and of `dlaunch exec`, for `dlaunch completion`.
util::CommandLineSpec describe_run_options();
util::CommandLineSpec describe_exec_options();

}  // namespace dlaunch::launch
