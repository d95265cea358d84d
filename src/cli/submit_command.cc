#include "cli/submit_command.h"

#include <algorithm>
#include <csignal>
#include <cstring>

#include <filesystem>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "jobs/array_watch.h"
#include "jobs/job_watch.h"
#include "jobs/never_submitted.h"
#include "jobs/submission_record.h"
#include "launch/token_setting.h"
#include "process/worker_process.h"
#include "slurm/partition_defaults.h"
#include "slurm/request_values.h"
#include "slurm/slurm_command.h"
#include "submit/array_folders.h"
#include "submit/before_sbatch.h"
#include "submit/config_file.h"
#include "submit/dlaunch_binary.h"
#include "submit/job_script.h"
#include "submit/resource_request.h"
#include "submit/script_value.h"
#include "submit/submission_folder.h"
#include "submit/submit_options.h"
#include "util/error.h"
#include "util/exit_codes.h"
#include "util/local_time.h"
#include "util/own_executable.h"
#include "util/safe_file.h"
#include "util/strings.h"
#include "util/subprocess.h"
#include "wire/token.h"

namespace dlaunch::cli {
namespace {

using namespace submit;

// Built-in defaults, then the config file ([defaults], then the profile), then flags.
submit::SubmitSettings merge_settings(const submit::SubmitOptions& options,
                                      const util::Environment& environment) {
  submit::SubmitSettings merged = submit::default_submit_settings();
  auto file = options.config ? options.config : submit::find_config_file(environment);
  if (options.config && !std::filesystem::exists(*options.config))
    throw util::InputError(fmt::format("--config {}: no such file", *options.config));
  if (options.config && std::filesystem::is_directory(*options.config))
    throw util::InputError(fmt::format("--config {}: is a folder; give the TOML file itself, e.g. --config "
                                       "{}/dlaunch.toml",
                                       *options.config, *options.config));
  if (file) {
    submit::apply_config_file(merged, *file, options.profile);
  } else if (options.profile) {
    throw util::InputError(fmt::format("--profile {}: no config file found (looked for ./dlaunch.toml and "
                                 "$XDG_CONFIG_HOME/dlaunch/config.toml); pass --config FILE",
                                 *options.profile));
  }
  for (const auto& [name, value] : options.flags.values()) merged.set(name, value.value, value.source);
  return merged;
}

// sbatch's spelling of --time and --mem, checked here rather than by
// sbatch at submission (and never with --dry-run).
void check_time_and_memory(const submit::SubmitSettings& settings) {
  for (const char* name : {"time", "mem"}) {
    const auto* setting = settings.find(name);
    const auto* text = setting == nullptr ? nullptr : std::get_if<std::string>(&setting->value);
    if (text == nullptr) continue;
    auto problem = std::string(name) == "time" ? slurm::time_limit_problem(*text) : slurm::memory_size_problem(*text);
    if (problem) throw util::InputError(fmt::format("{} '{}' (from {}) {}", name, *text, setting->source, *problem));
  }
}

void print_config(const submit::SubmitSettings& settings) {
  fmt::print("dlaunch submit settings (flags > profile > [defaults] > built-in):\n");
  for (const auto& key : submit::submit_keys()) {
    const auto* value = settings.find(key.name);
    if (value != nullptr)
      fmt::print("  {:<17} = {:<24} # {}\n", key.name, submit::format_value(value->value), value->source);
  }
}

nlohmann::json settings_json(const submit::SubmitSettings& settings, const submit::JobRequest& request) {
  nlohmann::json document;
  for (const auto& [name, value] : settings.values())
    document["settings"][name] = {{"value", submit::format_value(value.value)}, {"source", value.source}};
  document["command"] = request.command;
  document["dlaunch"] = request.dlaunch_path;
  document["timestamp"] = request.timestamp;
  // dlaunch jobs and status show the name the job got, derived or given.
  document["job_name"] = request.job_name.value_or("");
  document["nodes"] = request.nodes;
  document["gpus_per_node"] = request.gpus_per_node;
  return document;
}

// The folder submission folders are made in, checked before any path is
// made from it: empty, it has no absolute form; with a control character it
// would break the job script (submit/script_value.h).
std::string output_dir_of(const submit::SubmitSettings& settings) {
  const auto* found = settings.find("output-dir");
  if (found == nullptr) return "slurm-outputs";
  const std::string& dir = std::get<std::string>(found->value);
  if (dir.empty())
    throw util::InputError(fmt::format("output-dir (from {}) is empty; give the folder to make submission "
                                 "folders in, e.g. --output-dir slurm-outputs",
                                 found->source));
  submit::check_script_setting("output-dir", found->value, found->source);
  return dir;
}

// An interpreter given as a path must be there too (a name is looked up in
// the nodes' own PATH, which may differ from this machine's).
void check_python(const submit::SubmitSettings& settings) {
  const auto* found = settings.find("python");
  if (found == nullptr) return;
  const std::string& python = std::get<std::string>(found->value);
  if (python.find('/') == std::string::npos) return;
  if (!process::find_executable(python, util::Environment::from_process()))
    throw util::InputError(fmt::format("cannot submit: python '{}' (from {}) is not an executable file here. "
                                       "The nodes run it from the shared file system, so give an "
                                       "interpreter that exists on this machine",
                                       python, found->source));
}

// Without a CPU request of the user's, the partition's DefCpuPerGPU gives
// the CPUs per worker, when scontrol says (bounded: a few seconds, and a
// machine without Slurm answers at once). No answer keeps the built-in
// default (submit/resource_request.h).
void take_partition_cpu_default(submit::SubmitSettings& settings) {
  if (!submit::wants_partition_cpu_default(settings)) return;
  std::string partition =
      settings.string("partition").value_or(submit::partition_in(settings.list("sbatch-arg")).value_or(""));
  auto cpus = slurm::query_default_cpus_per_gpu(partition);
  if (!cpus) return;
  settings.set("cpus-per-gpu", std::int64_t{*cpus},
               fmt::format("{} {} (scontrol show partition)", submit::kPartitionDefaultSource,
                           partition.empty() ? std::string("Slurm chooses") : "'" + partition + "'"));
}

// The Slurm command a submission needs, looked for before its folder is
// made: without it nothing can be submitted, and --dry-run shows the job
// script without it. --setup lines run before srun and may put it in PATH
// (module load slurm): then it is not looked for.
void check_slurm_command(const submit::SubmitSettings& settings, bool srun) {
  const char* program = srun ? "srun" : "sbatch";
  if (srun && !settings.list("setup").empty()) return;
  if (process::find_executable(program, util::Environment::from_process())) return;
  throw util::SystemError(fmt::format(
      "cannot submit: '{}' is not in PATH on this machine. Is the Slurm client installed here (run dlaunch "
      "submit on a login node of the cluster)? Nothing was submitted and no folder was made; dlaunch submit "
      "--dry-run prints the job script without Slurm",
      program));
}

// Every file of a submission folder is new: created, never written over
// or through a link (util/safe_file.h).
void write_file(const std::string& path, const std::string& text) { util::write_new_file(path, text); }

// sbatch's job id: the first field of the last line that holds one ("12",
// "12;cluster" with --parsable; "Submitted batch job 12" from a site's
// wrapper that drops --parsable, or after its own notices).
std::optional<std::string> job_id_in(const std::string& sbatch_output) {
  std::optional<std::string> found;
  for (const auto& line : util::split(sbatch_output, '\n')) {
    auto words = util::split(std::string(util::trim(util::split(line, ';')[0])), ' ');
    if (!words.empty() && util::parse_int(words.back())) found = words.back();
  }
  return found;
}

// LINES (a Slurm command's words) indented under a message of dlaunch's.
std::string indented(const std::string& lines) {
  std::string text;
  for (const auto& line : util::split(std::string(util::trim(lines)), '\n')) text += "\n  " + line;
  return text;
}

// The job never reached Slurm: its folder keeps the job script and says
// why (jobs/never_submitted.h), and the secret no job will read goes.
// Returns what the user is told of the folder.
std::string keep_as_never_submitted(const submit::JobRequest& request, jobs::NeverSubmitted why) {
  why.recorded = util::local_time_now();
  std::error_code ignored;
  if (!why.may_be_queued && request.token_file) std::filesystem::remove(*request.token_file, ignored);
  std::string unsaved = jobs::record_never_submitted(request.submission_dir, why);
  if (!unsaved.empty()) fmt::print(stderr, "dlaunch: cannot record that the job was not submitted: {}\n", unsaved);
  return fmt::format("The job was not {}. Its folder {} keeps {} to read; dlaunch jobs and dlaunch status "
                     "list it as {}",
                     why.program == "srun" ? "started" : "submitted", request.submission_dir,
                     why.program == "srun" ? "its settings (config.json)" : "the job script (job.sbatch)",
                     jobs::kNotSubmittedState);
}

// sbatch ran and refused the job (exit code != 0).
[[noreturn]] void refused(const submit::JobRequest& request, const util::CapturedRun& sbatch) {
  const std::string words(util::trim(sbatch.err.empty() ? sbatch.out : sbatch.err));
  const std::string kept = keep_as_never_submitted(request, {"sbatch", sbatch.exit_code, words, "", false});
  try {
    slurm::throw_if_unconfigured("sbatch", sbatch);  // Slurm's words for it are no help
  } catch (const slurm::NotConfigured& unconfigured) {
    throw slurm::NotConfigured(fmt::format("{}\n{}", unconfigured.what(), kept));
  }
  throw util::InputError(fmt::format("sbatch refused the job (exit code {}):{}\n{}. Fix what sbatch names and "
                                     "submit again",
                                     sbatch.exit_code, indented(words.empty() ? "(it said nothing)" : words), kept));
}

// sbatch, run; a folder that says so when it cannot even be started.
util::CapturedRun run_sbatch(const submit::JobRequest& request, const std::string& script_path) {
  try {
    return util::run_captured(submit::sbatch_command(script_path));
  } catch (const util::SystemError& error) {
    std::string kept = keep_as_never_submitted(request, {"sbatch", std::nullopt, error.what(), "", false});
    throw util::SystemError(fmt::format("{}\n{}", error.what(), kept));
  }
}

// The job id sbatch printed. sbatch exited 0, so the job may be queued
// even when no id can be read: the folder and its secret stay for it.
std::string submitted_job_id(const submit::JobRequest& request, const util::CapturedRun& sbatch) {
  if (auto id = job_id_in(sbatch.out)) return *id;
  const std::string words(util::trim(sbatch.out + sbatch.err));
  (void)keep_as_never_submitted(request, {"sbatch", 0, words, "", true});
  throw util::SystemError(fmt::format(
      "sbatch exited 0 but printed no job id:{}\nThe job may be queued anyway: look for it with 'squeue --me "
      "--name {}'. Its folder {} stays as it is, for a job that runs from it",
      indented(words.empty() ? "(it printed nothing)" : words), request.job_name.value_or(""),
      request.submission_dir));
}

// Which Python the nodes will run REQUEST's program with, as far as this
// machine can tell: the interpreter is looked up in each node's PATH when
// the job starts, which is where a pyenv or conda python3 without torch
// comes in. Empty when the program is not run by Python or --python names it.
std::string python_note(const submit::JobRequest& request) {
  if (request.command.empty()) return "";
  const std::string& program = request.command.front();
  const std::string base = std::filesystem::path(program).filename().string();
  const bool python_file = program.ends_with(".py");
  const bool interpreter = base.starts_with("python");
  const bool chosen = std::any_of(request.run_args.begin(), request.run_args.end(),
                                  [](const std::string& arg) { return arg.starts_with("--python"); });
  if ((!python_file && !interpreter) || (python_file && chosen)) return "";
  auto here = process::find_executable(python_file ? "python3" : program, util::Environment::from_process());
  const std::string found = here ? *here : "not found in PATH";
  if (!python_file)
    return fmt::format("# {} is looked up in each node's PATH when the job starts (here: {})\n", program, found);
  return fmt::format("# {} runs with python3 as each node's PATH finds it when the job starts (here: {}); "
                     "--python FILE chooses one\n",
                     program, found);
}

// A dlaunch the other machines will likely not find (submit/dlaunch_binary.h),
// said once, in a dry run and a submission alike: a warning, since only the
// nodes can tell for sure.
void warn_of_node_local_dlaunch(const submit::JobRequest& request, bool srun) {
  if (auto warning = submit::node_local_warning(request, srun))
    fmt::print(stderr, "dlaunch: warning: {}\n", *warning);
}

// What the container image must provide for this machine's dlaunch mounted
// into it, each line after PREFIX; "" without one.
std::string container_note(const submit::JobRequest& request, const char* prefix) {
  std::string needs = submit::container_needs_note(request), text;
  if (needs.empty()) return "";
  for (const auto& line : util::split(needs, '\n')) text += std::string(prefix) + line + "\n";
  return text;
}

int dry_run(const submit::JobRequest& request, bool srun) {
  warn_of_node_local_dlaunch(request, srun);
  if (srun) {
    fmt::print("# dlaunch submit --srun would run:\n{}\n{}{}",
               util::shell_join(submit::foreground_command(request)), python_note(request),
               container_note(request, "# "));
    return 0;
  }
  fmt::print("# job script (--dry-run writes nothing; it would be {}/job.sbatch):\n{}\n# submitted with:\n{}\n{}{}",
             request.submission_dir, submit::job_script(request),
             util::shell_join(submit::sbatch_command(request.submission_dir + "/job.sbatch")), python_note(request),
             container_note(request, "# "));
  return 0;
}

[[noreturn]] void run_in_foreground(const submit::JobRequest& request) {
  ::setenv("TIMESTAMP", request.timestamp.c_str(), 1);
  ::setenv("OUTPUT_DIR", request.submission_dir.c_str(), 1);
  // srun passes its environment to the step: every node's dlaunch run gets
  // the job's fresh secret, which appears on no command line.
  if (request.launch == submit::LaunchMode::kNode)
    ::setenv(launch::kTokenVariable, rendezvous::generate_token().c_str(), 1);
  fmt::print(stderr, "dlaunch: running with srun; output folder {}\n", request.submission_dir);
  std::fflush(stderr);
  try {
    util::exec_replacing(submit::foreground_command(request));
  } catch (const util::SystemError& error) {
    std::string kept = keep_as_never_submitted(request, {"srun", std::nullopt, error.what(), "", false});
    throw util::SystemError(fmt::format("{}\n{}", error.what(), kept));
  }
}

// What a Ctrl-C (or SIGTERM, SIGHUP) while following says before dlaunch
// exits: the job itself goes on. Built before the handler is installed; the
// handler only writes it (async-signal-safe) and exits 128+N.
char stop_following_message[256];
std::size_t stop_following_length = 0;

void stop_following(int signal) {
  ssize_t ignored = ::write(STDERR_FILENO, stop_following_message, stop_following_length);
  (void)ignored;
  ::_exit(util::exit_code_of_signal(signal));
}

void say_the_job_goes_on_when_stopped(const std::string& job_id) {
  std::string message = fmt::format("\ndlaunch: stopped following job {}; the job goes on (dlaunch submit "
                                    "--wait is only its follower). scancel {} cancels it.\n",
                                    job_id, job_id);
  stop_following_length = std::min(message.size(), sizeof(stop_following_message));
  std::memcpy(stop_following_message, message.data(), stop_following_length);
  for (int signal : {SIGINT, SIGTERM, SIGHUP}) ::signal(signal, stop_following);
}

// Follows every task of the job array JOB_ID, then shows the table of
// tasks and names the failed ones; the exit code is 0 only when every task
// completed with 0.
int follow_array_job(const submit::JobRequest& request, const std::string& job_id) {
  const submit::JobArray& array = *request.array;
  fmt::print(stderr, "dlaunch: following the {} tasks of job array {} (Ctrl-C stops following; scancel {} "
             "cancels them)\n", array.tasks.size(), job_id, job_id);
  say_the_job_goes_on_when_stopped(job_id);
  std::vector<jobs::TaskStatus> statuses = jobs::follow_array(job_id, array);
  fmt::print("{}", jobs::array_table(array, statuses, request.submission_dir));
  std::fflush(stdout);
  auto failed = jobs::failed_task_lines(array, statuses, request.submission_dir, job_id);
  for (const std::string& line : failed) fmt::print(stderr, "dlaunch: {}\n", line);
  int code = jobs::array_exit_code(statuses);
  fmt::print(stderr, "dlaunch: job {} ended {} with exit code {} ({} of {} tasks completed with exit code 0)\n",
             job_id, code == 0 ? "COMPLETED" : "FAILED", code, array.tasks.size() - failed.size(),
             array.tasks.size());
  return code;
}

int submit_batch(const submit::JobRequest& request, bool wait) {
  const std::string script_path = request.submission_dir + "/job.sbatch";
  // A fresh secret for every submission; the script reads it from this file.
  if (request.token_file) submit::write_secret_file(*request.token_file, rendezvous::generate_token());
  write_file(script_path, submit::job_script(request));
  util::CapturedRun sbatch = run_sbatch(request, script_path);
  if (sbatch.exit_code != 0) refused(request, sbatch);
  std::string job_id = submitted_job_id(request, sbatch);
  write_file(request.submission_dir + "/job_id", job_id + "\n");
  if (request.array) {
    submit::record_array_job_id(request.submission_dir, *request.array, job_id);
    fmt::print("Submitted job array {} ({} tasks)\n  folder: {}\n  logs:   {}/task_<i>/slurm-{}_<i>.log\n", job_id,
               request.array->tasks.size(), request.submission_dir, request.submission_dir, job_id);
    if (!wait) return 0;
    std::fflush(stdout);
    return follow_array_job(request, job_id);
  }
  std::string log = fmt::format("{}/slurm-{}.log", request.submission_dir, job_id);
  fmt::print("Submitted job {}\n  folder: {}\n  log:    {}\n", job_id, request.submission_dir, log);
  if (!wait) return 0;
  std::fflush(stdout);
  fmt::print(stderr, "dlaunch: following job {} (Ctrl-C stops following; scancel {} cancels it)\n",
             job_id, job_id);
  say_the_job_goes_on_when_stopped(job_id);
  jobs::JobEnd end = jobs::follow_job(job_id, log, request.submission_dir);
  if (!end.note.empty()) fmt::print(stderr, "dlaunch: job {}: {}\n", job_id, end.note);
  fmt::print(stderr, "dlaunch: job {} ended {} with exit code {}\n", job_id, end.state, end.exit_code);
  // dlaunch status reads it once Slurm has forgotten the job (MinJobAge).
  // Slurm's own end when Slurm showed it; the verdict, saying so, when not.
  std::string source = end.note.empty() ? fmt::format("Slurm, seen by submit --wait at {}", util::local_time_now())
                                        : fmt::format("the job's verdict, seen by submit --wait at {} ({})",
                                                      util::local_time_now(), end.note);
  std::string unsaved =
      jobs::save_recorded_end(request.submission_dir, {end.state, end.exit_code, source, "", ""});
  if (!unsaved.empty()) fmt::print(stderr, "dlaunch: cannot record the job's end: {}\n", unsaved);
  return end.exit_code;
}

}  // namespace

int submit_command(const CommandArgs& args) {
  auto options = submit::parse_submit_options(args);
  if (!options) return 0;  // --help
  util::Environment environment = util::Environment::from_process();
  submit::SubmitSettings settings = merge_settings(*options, environment);
  take_partition_cpu_default(settings);
  check_time_and_memory(settings);
  if (options->print_config) {
    print_config(settings);
    return 0;
  }
  // The program must exist where the nodes will look: the shared file system.
  submit::check_program_here(options->command, settings.list("run-arg"), submit::job_python(settings));
  check_python(settings);
  const std::string output_dir = output_dir_of(settings);
  const std::string timestamp = submit::timestamp_for(std::time(nullptr));
  const bool srun = settings.flag("srun");
  // The settings are checked before the folder exists, so a refused
  // submission leaves none. A dry run writes nothing (no folder, no token
  // file): it shows the folder the job would get.
  submit::JobRequest request = submit::make_job_request(settings, options->command, util::own_executable(),
                                        submit::next_submission_path(output_dir, timestamp), timestamp);
  submit::check_mounted_binaries(request);  // a dry run refuses it too
  // What leaves for the nodes, checked by the nodes' own code: a mistake
  // found there would cost the job its place in the queue (before_sbatch.h).
  submit::check_node_arguments(request, settings, srun);
  if (const auto* setup = settings.find("setup")) submit::check_setup_lines(request.setup_lines, setup->source);
  if (options->dry_run) return dry_run(request, srun);
  check_slurm_command(settings, srun);
  // Before the folder: a SLURM_CONF naming no file would hold sbatch 60 s.
  slurm::require_configuration(srun ? "srun" : "sbatch");
  request = submit::make_job_request(settings, options->command, util::own_executable(),
                             submit::create_submission_folder(output_dir, timestamp), timestamp);
  write_file(request.submission_dir + "/config.json", settings_json(settings, request).dump(2) + "\n");
  // Slurm does not make --output's folder: every task's exists before sbatch.
  if (request.array) submit::create_task_folders(request.submission_dir, *request.array);
  warn_of_node_local_dlaunch(request, srun);
  fmt::print(stderr, "{}", container_note(request, "dlaunch: "));
  if (srun) run_in_foreground(request);
  return submit_batch(request, settings.flag("wait"));
}

}  // namespace dlaunch::cli
