#include "submit/job_script.h"

#include <algorithm>
#include <cctype>
#include <csignal>
#include <cstdint>
#include <fmt/format.h>
#include <map>

#include "launch/run_options.h"
#include "launch/launch_config.h"
#include "launch/token_setting.h"
#include "submit/job_name.h"
#include "submit/resource_request.h"
#include "submit/script_value.h"
#include "util/error.h"
#include "util/signal_names.h"
#include "util/strings.h"

namespace dlaunch::submit {
namespace {

LaunchMode launch_mode(const SubmitSettings& settings) {
  std::string mode = settings.string("launch").value_or("node");
  if (mode == "node") return LaunchMode::kNode;
  if (mode == "task") return LaunchMode::kTask;
  throw util::InputError(fmt::format("launch must be 'node' or 'task', got '{}' (from {})", mode,
                               settings.find("launch")->source));
}

constexpr int kMaxSignalSeconds = 65535;  // sbatch's limit for sig_time

// The preemption signal named by SPEC ("USR1", "sigusr2", "10"), else an
// InputError that says why it cannot be one.
std::string preempt_signal_name(const std::string& spec, const std::string& what) {
  std::string name = util::to_upper(spec);
  if (name.starts_with("SIG")) name = name.substr(3);
  // signal_number() reads names and numbers alike; a second "SIG" is no name.
  auto signal = name.starts_with("SIG") ? std::nullopt : util::signal_number(name);
  if (signal == SIGUSR1 || signal == SIGUSR2) return std::string(util::signal_name(*signal)).substr(3);
  if (auto known = util::signal_number(spec))
    throw util::InputError(fmt::format(
        "{}: {} cannot warn of a preemption. dlaunch run forwards USR1 or USR2 to the workers and "
        "lets them checkpoint; SIGTERM and SIGINT already stop the job (Slurm sends SIGTERM at the "
        "end anyway). Use USR1 or USR2, e.g. --signal USR1@120",
        what, util::signal_name(*known)));
  throw util::InputError(fmt::format(
      "{}: '{}' is not a signal. Expected USR1 or USR2 (also SIGUSR1, SIGUSR2, 10 or 12), "
      "optionally followed by @SECONDS, e.g. --signal USR1@120",
      what, spec));
}

// dlaunch run options that submit settings stand for.
std::vector<std::string> run_arguments(const SubmitSettings& settings) {
  std::vector<std::string> args;
  // As --name=value: a value that starts with '-' (a --prefix template
  // such as "--> ") would otherwise be refused on the nodes as a missing
  // value (util/missing_value.h).
  for (const char* name : {"python", "tee", "redirects", "prefix", "health-check"}) {
    if (auto value = settings.string(name)) args.push_back(fmt::format("--{}={}", name, *value));
  }
  for (const char* name : {"max-restarts", "shutdown-timeout", "rdzv-timeout", "heartbeat-timeout", "min-nodes",
                           "node-fail-limit", "hang-timeout", "startup-timeout", "straggler-lag", "stack-timeout",
                           "gate-timeout", "health-check-timeout"}) {
    if (auto value = settings.integer(name))
      args.insert(args.end(), {std::string("--") + name, std::to_string(*value)});
  }
  if (settings.flag("gate")) args.push_back("--gate");
  if (settings.flag("retry-repeated-failures")) args.push_back("--retry-repeated-failures");
  for (const auto& extra : settings.list("run-arg")) args.push_back(extra);
  return args;
}

// The CPUs dlaunch asks for each task: the CPUs per worker times the
// node's workers with --launch node (one task runs them all), the CPUs per
// worker with --launch task; nullopt when dlaunch asks for none.
std::optional<int> cpus_per_task(const JobRequest& request) {
  if (!request.cpus_per_worker) return std::nullopt;
  if (request.launch == LaunchMode::kTask) return *request.cpus_per_worker;
  return *request.cpus_per_worker * std::max(1, request.gpus_per_node);
}

// Options sbatch and srun share, in a stable order.
std::vector<std::string> allocation_options(const JobRequest& request) {
  std::vector<std::string> options;
  auto add = [&](const char* name, const std::optional<std::string>& value) {
    if (value) options.push_back(fmt::format("--{}={}", name, *value));
  };
  add("job-name", request.job_name);
  add("partition", request.partition);
  add("account", request.account);
  add("qos", request.qos);
  add("time", request.time);
  add("constraint", request.constraint);
  add("mem", request.mem);
  options.push_back(fmt::format("--nodes={}", request.nodes + request.spare_nodes));
  int tasks_per_node = request.launch == LaunchMode::kTask ? request.gpus_per_node : 1;
  options.push_back(fmt::format("--ntasks-per-node={}", tasks_per_node));
  // A GPU or CPU request among the sbatch args replaces dlaunch's own (resource_request.h).
  if (request.gpus_per_node > 0 && request.own_gpu_request)
    options.push_back(fmt::format("--gpus-per-node={}", request.gpus_per_node));
  if (auto cpus = cpus_per_task(request)) options.push_back(fmt::format("--cpus-per-task={}", *cpus));
  if (request.exclusive) options.push_back("--exclusive");
  return options;
}

std::string exit_code_file(const JobRequest& request) {
  return request.submission_dir + "/" + kExitCodeFileName;
}

// The most dlaunch run takes for a number of seconds (launch_config.cc).
constexpr std::int64_t kMaxLauncherSeconds = 7 * 24 * 3600;

// The --shutdown-timeout the launchers will use. Throws InputError for one
// they would refuse, which would otherwise overflow srun's --wait here
// ("--run-arg=--shutdown-timeout=99999999999") and fail only on the nodes.
int shutdown_seconds(const std::vector<std::string>& run_args) {
  auto value = launch::run_option_value(run_args, "--shutdown-timeout");
  if (!value) return static_cast<int>(launch::kDefaultShutdownTimeout.count());
  auto seconds = util::parse_int(*value);
  if (!seconds || *seconds < 0 || *seconds > kMaxLauncherSeconds)
    throw util::InputError(fmt::format(
        "dlaunch run --shutdown-timeout '{}' (from shutdown-timeout or --run-arg) must be a whole "
        "number of seconds from 0 to {}, as dlaunch run takes it on the nodes; e.g. "
        "--shutdown-timeout 60",
        *value, kMaxLauncherSeconds));
  return static_cast<int>(*seconds);
}

// How long the step guard gives srun to end by itself once the verdict is
// in: the launchers that remain exit right after it (their workers had
// stopped before it was decided), so a few seconds, and a shutdown's worth
// for a launcher still stopping.
int step_grace_seconds(const JobRequest& request) {
  return shutdown_seconds(request.run_args) + kStepGraceMarginSeconds;
}

// Where the launchers run: a batch job's step, or --srun's in the foreground.
enum class StepKind { kBatch, kForeground };

// A launcher that speaks for the job from another host than the batch
// script's waits this long after the verdict before it cancels the job
// itself (launch/launcher.cc): the step guard's grace, and time for the
// job's end, which stops it, to reach it.
int end_job_after_seconds(const JobRequest& request) { return step_grace_seconds(request) + 10; }

std::vector<std::string> node_program(const JobRequest& request, StepKind step) {
  // In a container the step's dlaunch is the image's, or this machine's mounted there.
  std::vector<std::string> program{request.container ? request.container->dlaunch : request.dlaunch_path};
  if (request.launch == LaunchMode::kTask) {
    program.push_back("exec");
  } else {
    program.insert(program.end(), {"run", "--log-dir", request.submission_dir + "/logs"});
    if (request.signal) program.insert(program.end(), {"--preempt-signal", request.signal->name});
    // The hosts dlaunch benched, kept across requeues so the requeued job
    // excludes them (slurm/bench_record.h); in the submission folder,
    // which every run of the job script shares.
    if (request.requeue)
      program.insert(program.end(),
                     {"--requeue", "--bench-record", request.submission_dir + "/" + kBenchRecordFileName});
    // The step has nodes + spares nodes: --nnodes tells the launchers how
    // many train, and the rest stand by.
    if (request.spare_nodes > 0) program.insert(program.end(), {"--nnodes", std::to_string(request.nodes)});
    // The job's verdict, for the step guard (step_guard.h) and the job's exit code.
    program.insert(program.end(), {"--exit-code-file", exit_code_file(request)});
    // In a batch job the guard runs on the batch host, which the job may
    // lose; with --srun it runs here.
    if (step == StepKind::kBatch)
      program.insert(program.end(), {"--end-job-after", std::to_string(end_job_after_seconds(request))});
  }
  program.insert(program.end(), request.run_args.begin(), request.run_args.end());
  program.push_back("--");
  program.insert(program.end(), request.command.begin(), request.command.end());
  return program;
}

// With one task per GPU nothing but srun stops the other tasks when one
// fails. With one dlaunch run per node, the launchers stop each other and
// exit with the same code; srun killing the slower ones on the way out
// would turn the job's exit code into 143 (SIGTERM) instead of the worker's.
//
// With spare nodes a launcher's task that dies (killed, its node lost) must
// not end the step: --no-kill keeps the step when a node fails, and
// --kill-on-bad-exit=0 when a task exits non-zero (a site may set
// KillOnBadExit=1); the launchers that remain replace the lost node.
void add_kill_on_bad_exit(std::vector<std::string>& srun, const JobRequest& request) {
  if (request.launch == LaunchMode::kTask) srun.push_back("--kill-on-bad-exit=1");
  if (request.outlives_a_node()) srun.insert(srun.end(), {"--no-kill", "--kill-on-bad-exit=0"});
}

// In node mode the launchers end together, within one shutdown of each
// other. A launcher that never reached the rendezvous (stuck on a hung file
// system, say) would keep the step, and the job, alive until its time
// limit: srun --wait ends the remaining tasks that long after the first
// one exited, enough for the others' orderly shutdown.
//
// Not with spare nodes: there the first task to exit is a lost node's, and
// the others go on without it.
void add_straggler_wait(std::vector<std::string>& srun, const JobRequest& request) {
  if (request.launch == LaunchMode::kTask) return;
  if (request.outlives_a_node()) {
    srun.push_back("--wait=0");  // unlimited, whatever the site's WaitTime
    return;
  }
  int seconds = shutdown_seconds(request.run_args) + kStragglerMarginSeconds;
  srun.push_back(fmt::format("--wait={}", seconds));
}

// --requeue needs the signal that precedes it, a batch job, and a dlaunch
// run on node 0 to do it.
void check_requeue(const SubmitSettings& settings, const JobRequest& request) {
  const std::string& source = settings.find("requeue")->source;
  if (!request.signal)
    throw util::InputError(fmt::format(
        "requeue (from {}) needs a signal to requeue after: the workers get --signal's signal, "
        "save a checkpoint and exit, and then node 0 requeues the job. Add --signal USR1@120 (or "
        "signal = \"USR1@120\" in dlaunch.toml), choosing the seconds your checkpoint needs",
        source));
  if (settings.flag("srun"))
    throw util::InputError(fmt::format(
        "requeue (from {}) cannot be used with --srun (from {}): Slurm requeues batch jobs only, "
        "and --srun runs the job as an interactive step in the foreground. Drop --srun to submit "
        "with sbatch, or drop --requeue",
        source, settings.find("srun")->source));
  if (request.launch == LaunchMode::kTask)
    throw util::InputError(fmt::format(
        "requeue (from {}) cannot be used with --launch task (from {}): with one task per GPU no "
        "dlaunch run supervises the workers, so nothing requeues the job once they exited. Use "
        "--launch node (the default), or drop --requeue",
        source, settings.find("launch")->source));
}

// PATH inside the job's own folder as a shell word: under the submission
// folder, or for an array task under its task_<i>/ ("$task_dir"/PATH).
std::string run_folder_word(const JobRequest& request, const std::string& path) {
  if (!request.array) return util::shell_join({request.submission_dir + "/" + path});
  return "\"$task_dir\"/" + util::shell_join({path});
}

// The word after the first FLAG from AT on in WORDS, or WORDS.size().
std::size_t value_of(const std::vector<std::string>& words, std::size_t at, std::string_view flag) {
  for (std::size_t i = at; i + 1 < words.size(); ++i) {
    if (words[i] == flag) return i + 1;
  }
  return words.size();
}

// The srun line of the job script: as srun_step_command(), except that the
// worker log folder is the script's $log_dir (it differs after a requeue),
// an array task's exit-code file is in its own folder, and a sweep's task
// adds its arguments ($task_args, from the case block).
std::string script_step_line(const JobRequest& request) {
  std::vector<std::string> words = srun_step_command(request);
  // node_program()'s words come last: srun's options and the --srun-args,
  // which may hold anything, come before its --log-dir.
  const std::size_t program_at = words.size() - node_program(request, StepKind::kBatch).size();
  std::map<std::size_t, std::string> shell_text;
  if (request.launch == LaunchMode::kNode) {
    shell_text[value_of(words, program_at, "--log-dir")] = "\"$log_dir\"";
    if (request.array)
      shell_text[value_of(words, program_at, "--exit-code-file")] = run_folder_word(request, kExitCodeFileName);
    if (request.array && request.requeue)
      shell_text[value_of(words, program_at, "--bench-record")] = run_folder_word(request, kBenchRecordFileName);
  }
  std::string line;
  // The step guard's FILE word is the script's: an array task's is in its folder.
  if (request.launch == LaunchMode::kNode)
    line = fmt::format("{} __run-step {} {} --", util::shell_join({request.dlaunch_path}),
                       run_folder_word(request, kExitCodeFileName), step_grace_seconds(request));
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (!line.empty()) line += ' ';
    auto given = shell_text.find(i);
    line += given != shell_text.end() ? given->second : util::shell_join({words[i]});
  }
  if (request.array && request.array->swept) line += " \"${task_args[@]}\"";
  return line;
}

// --gate: node 0 wrote the hosts the gate benched into the run's logs; a
// copy beside job.sbatch is what the next submission's --exclude takes.
std::string benched_hosts_lines(const JobRequest& request) {
  if (!request.gate) return "";
  std::string text = "# --gate: the hosts the gate benched, for the next submission's --exclude.\n";
  text += fmt::format("if [ -f \"$log_dir/gate/benched-hosts\" ]; then cp \"$log_dir/gate/benched-hosts\" {}; fi\n",
                      run_folder_word(request, "benched-hosts"));
  return text;
}

// Sets $log_dir: logs/ on the first run, logs/requeue_N/ when Slurm runs the
// script again after N requeues, so the first run's logs stay as they were.
std::string log_dir_lines(const JobRequest& request) {
  std::string text;
  text += "# Worker logs: logs/ on the first run; logs/requeue_N/ when Slurm started the job\n";
  text += "# again after N requeues (SLURM_RESTART_COUNT=N), so no run overwrites another's.\n";
  text += fmt::format("log_dir={}\n", run_folder_word(request, "logs"));
  text += "if [ \"${SLURM_RESTART_COUNT:-0}\" != 0 ]; then\n";
  text += fmt::format("  log_dir={}\"$SLURM_RESTART_COUNT\"\n", run_folder_word(request, "logs/requeue_"));
  text += "  echo \"dlaunch: job $SLURM_JOB_ID started again after requeue $SLURM_RESTART_COUNT; "
          "worker logs in $log_dir\"\n";
  text += "fi\n";
  return text;
}

// An array task's folder (task_<i>/, made before sbatch: Slurm does not
// make --output's folder) is its OUTPUT_DIR; a sweep's task picks its
// arguments by its index.
std::string array_lines(const JobRequest& request) {
  std::string text;
  text += "# A job array: task_<i>/ holds task i's Slurm log, worker logs, config.json and exit code.\n";
  text += fmt::format("task_dir={}\"$SLURM_ARRAY_TASK_ID\"\n",
                      util::shell_join({request.submission_dir + "/task_"}));
  text += "export OUTPUT_DIR=\"$task_dir\"\n";
  if (!request.array->swept) return text;
  text += "# The sweep's values of this task, added to the program's arguments.\n";
  text += "case \"$SLURM_ARRAY_TASK_ID\" in\n";
  for (const SweepTask& task : request.array->tasks)
    text += fmt::format("  {}) task_args=({}) ;;\n", task.index, util::shell_join(task.args));
  text += "  *) echo \"dlaunch: array task $SLURM_ARRAY_TASK_ID is none of this sweep's\" >&2; exit 1 ;;\n";
  text += "esac\n";
  return text;
}

// The --setup lines, as written (make_job_request refused control characters).
std::string setup_text(const JobRequest& request) {
  if (request.setup_lines.empty()) return "";
  std::string text = "# --setup: run before the step; srun passes the environment they leave to every node.\n";
  for (const std::string& line : request.setup_lines) text += line + "\n";
  return text;
}

// Reads the rendezvous secret from the token file into the environment srun
// passes to every node's dlaunch run. The secret itself is not in the script.
std::string token_lines(const std::string& token_file) {
  std::string text;
  text += "# The rendezvous secret every node's dlaunch run proves (the file is readable by you only).\n";
  text += fmt::format("{}=$(cat {}) || exit 1\n", launch::kTokenVariable, util::shell_join({token_file}));
  text += fmt::format("export {}\n", launch::kTokenVariable);
  return text;
}

// The submission folder is output-dir made absolute (under the current
// folder when relative) and goes into #SBATCH --output and the script.
void check_submission_folder(const std::string& folder, const SubmitSettings& settings) {
  const auto* output_dir = settings.find("output-dir");
  std::string source =
      output_dir == nullptr
          ? std::string("the current folder")
          : fmt::format("output-dir '{}' from {}, under the current folder",
                        std::get<std::string>(output_dir->value), output_dir->source);
  check_script_text("the submission folder", folder, source,
                    "Run dlaunch submit from a folder whose path has no control character, or give "
                    "--output-dir an absolute path without one");
}

// Every #SBATCH option, in the script's order: the resources, the signal,
// the log file, then the user's own, which come last so they can override.
std::vector<std::string> sbatch_options(const JobRequest& request) {
  std::vector<std::string> options = allocation_options(request);
  // No B:, so Slurm signals every step's tasks: each node's dlaunch run.
  if (request.signal) options.push_back("--signal=" + request.signal->sbatch_value());
  if (request.requeue) options.push_back("--requeue");
  // A node that fails (Slurm marks it DOWN) must not end a job whose spares replace it.
  if (request.outlives_a_node()) options.push_back("--no-kill");
  // Each array task logs into its own folder: %A is the array's job id, %a the task's index.
  if (request.array) options.push_back("--array=" + request.array->spec);
  options.push_back(request.array ? fmt::format("--output={}/task_%a/slurm-%A_%a.log", request.submission_dir)
                                  : fmt::format("--output={}/slurm-%j.log", request.submission_dir));
  // Slurm may run the script again (--requeue, or after a node failure) and
  // would truncate slurm-<jobid>.log: add to it instead, keep the first run's.
  options.push_back("--open-mode=append");
  options.insert(options.end(), request.sbatch_args.begin(), request.sbatch_args.end());
  return options;
}

// The GPUs and CPUs the job asks for, from SETTINGS and the sbatch args.
void take_resources(JobRequest& request, const SubmitSettings& settings) {
  Resources resources =
      resources_of(settings, request.sbatch_args, request.nodes, request.launch == LaunchMode::kTask);
  request.gpus_per_node = resources.gpus_per_node;
  request.own_gpu_request = resources.own_gpu_request;
  request.cpus_per_worker = resources.cpus_per_worker;
  request.step_cpus_per_task = resources.step_cpus_per_task;
}

// SETTING, when ASKED for, needs the dlaunch run on each node that
// --launch node starts: with one task per GPU none is there to do WHAT.
void refuse_under_task_launch(const SubmitSettings& settings, const char* setting, bool asked, const char* what) {
  if (!asked) return;
  throw util::InputError(fmt::format("{} (from {}) needs --launch node: with one task per GPU no dlaunch run is "
                                     "there to {}",
                                     setting, settings.find(setting)->source, what));
}

}  // namespace

std::string PreemptSignal::sbatch_value() const {
  return fmt::format("{}{}@{}", reservation ? "R:" : "", name, seconds);
}

PreemptSignal parse_preempt_signal(const std::string& text, const std::string& source) {
  const std::string what = fmt::format("signal '{}' (from {})", text, source);
  PreemptSignal signal;
  std::string rest(util::trim(text));
  // sbatch's optional {R|B}: prefix.
  if (auto colon = rest.find(':'); colon != std::string::npos) {
    std::string flags = util::to_upper(rest.substr(0, colon));
    if (flags.find('B') != std::string::npos)
      throw util::InputError(fmt::format(
          "{}: 'B:' makes Slurm signal only the batch shell, but every node's dlaunch run must "
          "receive the signal in its job step to forward it to the workers. Drop the 'B:' (e.g. "
          "--signal USR1@120): dlaunch submit has Slurm signal every step",
          what));
    if (flags.empty() || flags.find_first_not_of('R') != std::string::npos)
      throw util::InputError(fmt::format(
          "{}: '{}:' is not a prefix sbatch knows. Expected [R:]SIG[@SECONDS], e.g. --signal "
          "USR1@120",
          what, rest.substr(0, colon)));
    signal.reservation = true;
    rest = rest.substr(colon + 1);
  }
  std::string name = rest, seconds;
  if (auto at = rest.find('@'); at != std::string::npos) {
    name = rest.substr(0, at);
    seconds = rest.substr(at + 1);
    auto value = util::parse_int(seconds);
    if (!value || *value < 0 || *value > kMaxSignalSeconds)
      throw util::InputError(fmt::format(
          "{}: the time after '@' must be a whole number of seconds from 0 to {} (as sbatch "
          "takes it), got '{}'. E.g. --signal USR1@120",
          what, kMaxSignalSeconds, seconds));
    signal.seconds = static_cast<int>(*value);
  }
  signal.name = preempt_signal_name(name, what);
  return signal;
}

JobRequest make_job_request(const SubmitSettings& settings, std::vector<std::string> command,
                            std::string dlaunch_path, std::string submission_dir,
                            std::string timestamp) {
  // Before anything else: a control character in a value would inject a
  // line into the script, whatever else is wrong.
  for (const auto& [name, value] : settings.values())
    check_script_setting(name, value.value, value.source);
  check_submission_folder(submission_dir, settings);
  JobRequest request;
  request.nodes = settings.bounded_integer("nodes").value_or(1);
  request.spare_nodes = settings.bounded_integer("spare-nodes").value_or(0);
  // sbatch gets nodes and spares together: bounded as each one is.
  if (const Key* nodes = find_key("nodes"); request.nodes + std::int64_t{request.spare_nodes} > nodes->range.high)
    throw util::InputError(fmt::format("nodes {} and spare-nodes {} (from {}) make {} nodes for sbatch, more than the "
                                       "{} launchers a job may have (node 0 sends each one the whole job in one "
                                       "message); give fewer spare nodes",
                                       request.nodes, request.spare_nodes, settings.find("spare-nodes")->source,
                                       request.nodes + std::int64_t{request.spare_nodes}, nodes->range.high));
  request.partition = settings.string("partition");
  request.job_name = settings.string("job-name");
  if (!request.job_name && !command.empty()) request.job_name = derived_job_name(command);
  request.time = settings.string("time");
  request.account = settings.string("account");
  request.qos = settings.string("qos");
  request.constraint = settings.string("constraint");
  request.mem = settings.string("mem");
  request.exclusive = settings.flag("exclusive");
  request.resv_ports = settings.flag("resv-ports");
  refuse_contradicting_layout(settings);
  request.sbatch_args = settings.list("sbatch-arg");
  request.srun_args = settings.list("srun-arg");
  request.setup_lines = settings.list("setup");
  request.array = job_array_of(settings, request.sbatch_args);
  request.launch = launch_mode(settings);
  take_resources(request, settings);
  if (request.launch == LaunchMode::kTask && request.gpus_per_node == 0)
    throw util::InputError("--launch task starts one task per GPU, so it needs --gpus-per-node 1 or more");
  if (request.launch == LaunchMode::kTask) {
    refuse_under_task_launch(settings, "spare-nodes", request.spare_nodes > 0, "replace a lost node");
    refuse_under_task_launch(settings, "gate", settings.flag("gate"), "check the nodes first");
    refuse_under_task_launch(settings, "hang-timeout", settings.integer("hang-timeout").has_value(),
                             "watch the workers' progress");
    refuse_under_task_launch(settings, "startup-timeout", settings.integer("startup-timeout").has_value(),
                             "watch the workers' progress");
    refuse_under_task_launch(settings, "heartbeat-timeout", settings.integer("heartbeat-timeout").has_value(),
                             "keep a heartbeat between the nodes");
  }
  if (settings.integer("gate-timeout") && !settings.flag("gate"))
    throw util::InputError(fmt::format("gate-timeout (from {}) needs gate", settings.find("gate-timeout")->source));
  if (auto startup = settings.integer("startup-timeout")) {
    // Refused now, as every launcher would refuse it when the job starts.
    auto hang = settings.integer("hang-timeout").value_or(0);
    if (hang <= 0 || *startup <= hang)
      throw util::InputError(fmt::format("startup-timeout {} (from {}) lengthens hang-timeout until the first "
                                         "step: it needs hang-timeout, and must be longer than it ({})",
                                         *startup, settings.find("startup-timeout")->source, hang));
  }
  request.gate = settings.flag("gate");
  request.min_nodes = settings.bounded_integer("min-nodes").value_or(request.nodes);
  if (request.min_nodes > request.nodes)
    throw util::InputError(fmt::format("min-nodes {} (from {}) must be at most nodes ({}): it is the "
                                       "fewest nodes the job goes on with",
                                       request.min_nodes, settings.find("min-nodes")->source, request.nodes));
  // Refused now, as the launchers would refuse it on the nodes.
  (void)settings.bounded_integer("heartbeat-timeout");
  request.run_args = run_arguments(settings);
  (void)shutdown_seconds(request.run_args);  // refused now, not on the nodes
  if (auto signal = settings.string("signal"))
    request.signal = parse_preempt_signal(*signal, settings.find("signal")->source);
  request.requeue = settings.flag("requeue");
  if (request.requeue) check_requeue(settings, request);
  request.container = container_step(settings, dlaunch_path, submission_dir, request.gate);
  if (request.container) request.srun_args = request.container->srun_args;
  request.dlaunch_path = std::move(dlaunch_path);
  request.command = std::move(command);
  request.submission_dir = std::move(submission_dir);
  request.timestamp = std::move(timestamp);
  // The launchers of one job authenticate each other at the rendezvous;
  // one task per GPU has no rendezvous.
  if (request.launch == LaunchMode::kNode)
    request.token_file = request.submission_dir + "/" + kTokenFileName;
  return request;
}

std::vector<std::string> srun_step_command(const JobRequest& request) {
  std::vector<std::string> srun{"srun", fmt::format("--nodes={}", request.nodes + request.spare_nodes)};
  int tasks_per_node = request.launch == LaunchMode::kTask ? request.gpus_per_node : 1;
  srun.push_back(fmt::format("--ntasks-per-node={}", tasks_per_node));
  // The user's own GPU request (an sbatch-arg) stays the job's: a step gets
  // every GPU of the job on its nodes (srun's default). One task per GPU
  // still needs the count.
  if (request.gpus_per_node > 0 && (request.own_gpu_request || request.launch == LaunchMode::kTask))
    srun.push_back(fmt::format("--gpus-per-node={}", request.gpus_per_node));
  // Since Slurm 22.05 a step does not inherit --cpus-per-task from the batch job.
  if (auto cpus = cpus_per_task(request)) srun.push_back(fmt::format("--cpus-per-task={}", *cpus));
  if (request.step_cpus_per_task) srun.push_back(fmt::format("--cpus-per-task={}", *request.step_cpus_per_task));
  add_kill_on_bad_exit(srun, request);
  add_straggler_wait(srun, request);
  if (request.resv_ports) srun.push_back("--resv-ports=1");
  srun.insert(srun.end(), request.srun_args.begin(), request.srun_args.end());
  auto program = node_program(request, StepKind::kBatch);
  srun.insert(srun.end(), program.begin(), program.end());
  return srun;
}

std::vector<std::string> node_run_arguments(const JobRequest& request) {
  std::vector<std::string> program = node_program(request, StepKind::kBatch);
  // Past the dlaunch binary and its subcommand (run or exec).
  return {program.begin() + 2, program.end()};
}

std::string job_script(const JobRequest& request) {
  std::string script = "#!/bin/bash\n";
  // One option a line, quoted for sbatch: a value with spaces, quotes or '#'
  // stays one argument (make_job_request refused control characters).
  for (const auto& option : sbatch_options(request))
    script += "#SBATCH " + util::sbatch_quote(option) + "\n";
  script += "\n# Written by dlaunch submit. Every node runs dlaunch, which derives nodes,\n";
  script += "# node rank, GPUs, master address and port from the Slurm step.\n";
  script += fmt::format("export TIMESTAMP={}\n", util::shell_join({request.timestamp}));
  if (request.array) script += array_lines(request);
  else script += fmt::format("export OUTPUT_DIR={}\n", util::shell_join({request.submission_dir}));
  const std::string container = request.container ? container_comment(*request.container) : "";
  if (request.launch == LaunchMode::kTask) {
    script += setup_text(request) + container + script_step_line(request) + "\n";
    return script;
  }
  script += log_dir_lines(request);
  if (request.token_file) script += token_lines(*request.token_file);
  script += setup_text(request) + container;
  script += "# The step ends when srun does, or shortly after the job's verdict is in: a lost\n";
  script += "# node's task (frozen, cut off, powered off) never reports to srun.\n";
  script += script_step_line(request) + "\n";
  if (request.gate) script += "status=$?\n" + benched_hosts_lines(request) + "exit \"$status\"\n";
  return script;
}

std::vector<std::string> foreground_command(const JobRequest& request) {
  std::vector<std::string> step = srun_job_command(request);
  if (request.launch == LaunchMode::kNode) {
    std::vector<std::string> guard{request.dlaunch_path, "__run-step", exit_code_file(request),
                                   std::to_string(step_grace_seconds(request)), "--foreground", "--"};
    step.insert(step.begin(), guard.begin(), guard.end());
  }
  if (request.setup_lines.empty()) return step;
  // The setup lines run here, in the bash that then starts the step, which
  // passes the environment they leave on to it.
  return {"/bin/bash", "-c", setup_text(request) + "exec " + util::shell_join(step)};
}

std::vector<std::string> sbatch_command(const std::string& script_path) {
  return {"sbatch", "--parsable", script_path};
}

std::vector<std::string> srun_job_command(const JobRequest& request) {
  std::vector<std::string> srun{"srun"};
  for (const auto& option : allocation_options(request)) srun.push_back(option);
  for (const auto& extra : request.sbatch_args) srun.push_back(extra);
  // srun takes --signal as sbatch does, without B:.
  if (request.signal) srun.push_back("--signal=" + request.signal->sbatch_value());
  add_kill_on_bad_exit(srun, request);
  add_straggler_wait(srun, request);
  // One Ctrl-C cancels the step (srun's default needs two within a second).
  srun.push_back("--quit-on-interrupt");
  if (request.resv_ports) srun.push_back("--resv-ports=1");
  srun.insert(srun.end(), request.srun_args.begin(), request.srun_args.end());
  auto program = node_program(request, StepKind::kForeground);
  srun.insert(srun.end(), program.begin(), program.end());
  return srun;
}

}  // namespace dlaunch::submit
