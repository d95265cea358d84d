#include "submit/job_script.h"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>

#include "util/error.h"

namespace dlaunch::submit {
namespace {

std::optional<int> small_int(const SubmitSettings& settings, const std::string& name, int low,
                             int high) {
  auto value = settings.integer(name);
  if (!value) return std::nullopt;
  if (*value < low || *value > high)
    throw InputError(fmt::format("{} must be from {} to {}, got {} (from {})", name, low, high,
                                 *value, settings.find(name)->source));
  return static_cast<int>(*value);
}

LaunchMode launch_mode(const SubmitSettings& settings) {
  std::string mode = settings.string("launch").value_or("node");
  if (mode == "node") return LaunchMode::kNode;
  if (mode == "task") return LaunchMode::kTask;
  throw InputError(fmt::format("launch must be 'node' or 'task', got '{}' (from {})", mode,
                               settings.find("launch")->source));
}

// dlaunch run options that submit settings stand for.
std::vector<std::string> run_arguments(const SubmitSettings& settings) {
  std::vector<std::string> args;
  for (const char* name : {"python", "tee", "redirects", "prefix"}) {
    if (auto value = settings.string(name)) args.insert(args.end(), {std::string("--") + name, *value});
  }
  for (const char* name : {"max-restarts", "shutdown-timeout", "rdzv-timeout"}) {
    if (auto value = settings.integer(name))
      args.insert(args.end(), {std::string("--") + name, std::to_string(*value)});
  }
  for (const auto& extra : settings.list("run-arg")) args.push_back(extra);
  return args;
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
  options.push_back(fmt::format("--nodes={}", request.nodes));
  int tasks_per_node = request.launch == LaunchMode::kTask ? request.gpus_per_node : 1;
  options.push_back(fmt::format("--ntasks-per-node={}", tasks_per_node));
  if (request.gpus_per_node > 0) options.push_back(fmt::format("--gpus-per-node={}", request.gpus_per_node));
  if (request.cpus_per_gpu) {
    int per_task = request.launch == LaunchMode::kTask ? *request.cpus_per_gpu
                                                       : *request.cpus_per_gpu * std::max(1, request.gpus_per_node);
    options.push_back(fmt::format("--cpus-per-task={}", per_task));
  }
  if (request.exclusive) options.push_back("--exclusive");
  return options;
}

std::vector<std::string> node_program(const JobRequest& request) {
  std::vector<std::string> program{request.dlaunch_path};
  if (request.launch == LaunchMode::kTask) {
    program.push_back("exec");
  } else {
    program.insert(program.end(), {"run", "--log-dir", request.submission_dir + "/logs"});
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
void add_kill_on_bad_exit(std::vector<std::string>& srun, const JobRequest& request) {
  if (request.launch == LaunchMode::kTask) srun.push_back("--kill-on-bad-exit=1");
}

bool needs_quotes(const std::string& word) {
  if (word.empty()) return true;
  for (char c : word) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || std::string_view("-_./=:,+@%").find(c) != std::string_view::npos))
      return true;
  }
  return false;
}

}  // namespace

std::string shell_join(const std::vector<std::string>& args) {
  std::string line;
  for (const auto& word : args) {
    if (!line.empty()) line += ' ';
    if (!needs_quotes(word)) {
      line += word;
      continue;
    }
    line += '\'';
    for (char c : word) line += (c == '\'') ? std::string("'\\''") : std::string(1, c);
    line += '\'';
  }
  return line;
}

JobRequest make_job_request(const SubmitSettings& settings, std::vector<std::string> command,
                            std::string dlaunch_path, std::string submission_dir,
                            std::string timestamp) {
  JobRequest request;
  request.nodes = small_int(settings, "nodes", 1, 100000).value_or(1);
  request.gpus_per_node = small_int(settings, "gpus-per-node", 0, 1024).value_or(1);
  request.cpus_per_gpu = small_int(settings, "cpus-per-gpu", 1, 4096);
  request.partition = settings.string("partition");
  request.job_name = settings.string("job-name");
  if (!request.job_name && !command.empty()) {
    std::string program = command.back();
    for (const auto& word : command) {
      if (word.find('/') != std::string::npos || word.ends_with(".py")) {
        program = word;
        if (word.ends_with(".py")) break;
      }
    }
    request.job_name = program.substr(program.find_last_of('/') + 1);
  }
  request.time = settings.string("time");
  request.account = settings.string("account");
  request.qos = settings.string("qos");
  request.constraint = settings.string("constraint");
  request.mem = settings.string("mem");
  request.exclusive = settings.flag("exclusive");
  request.resv_ports = settings.flag("resv-ports");
  request.sbatch_args = settings.list("sbatch-arg");
  request.launch = launch_mode(settings);
  if (request.launch == LaunchMode::kTask && request.gpus_per_node == 0)
    throw InputError("--launch task starts one task per GPU, so it needs --gpus-per-node 1 or more");
  request.run_args = run_arguments(settings);
  request.dlaunch_path = std::move(dlaunch_path);
  request.command = std::move(command);
  request.submission_dir = std::move(submission_dir);
  request.timestamp = std::move(timestamp);
  return request;
}

std::vector<std::string> srun_step_command(const JobRequest& request) {
  std::vector<std::string> srun{"srun", fmt::format("--nodes={}", request.nodes)};
  int tasks_per_node = request.launch == LaunchMode::kTask ? request.gpus_per_node : 1;
  srun.push_back(fmt::format("--ntasks-per-node={}", tasks_per_node));
  if (request.gpus_per_node > 0) srun.push_back(fmt::format("--gpus-per-node={}", request.gpus_per_node));
  // Since Slurm 22.05 a step does not inherit --cpus-per-task from the batch job.
  for (const auto& option : allocation_options(request)) {
    if (option.starts_with("--cpus-per-task=")) srun.push_back(option);
  }
  add_kill_on_bad_exit(srun, request);
  if (request.resv_ports) srun.push_back("--resv-ports=1");
  auto program = node_program(request);
  srun.insert(srun.end(), program.begin(), program.end());
  return srun;
}

std::string job_script(const JobRequest& request) {
  std::string script = "#!/bin/bash\n";
  for (const auto& option : allocation_options(request)) script += "#SBATCH " + option + "\n";
  script += fmt::format("#SBATCH --output={}/slurm-%j.log\n", request.submission_dir);
  for (const auto& extra : request.sbatch_args) script += "#SBATCH " + extra + "\n";
  script += "\n# Written by dlaunch submit. Every node runs dlaunch, which derives nodes,\n";
  script += "# node rank, GPUs, master address and port from the Slurm step.\n";
  script += fmt::format("export TIMESTAMP={}\n", shell_join({request.timestamp}));
  script += fmt::format("export OUTPUT_DIR={}\n", shell_join({request.submission_dir}));
  script += shell_join(srun_step_command(request)) + "\n";
  return script;
}

std::vector<std::string> sbatch_command(const std::string& script_path) {
  return {"sbatch", "--parsable", script_path};
}

std::vector<std::string> srun_job_command(const JobRequest& request) {
  std::vector<std::string> srun{"srun"};
  for (const auto& option : allocation_options(request)) srun.push_back(option);
  for (const auto& extra : request.sbatch_args) srun.push_back(extra);
  add_kill_on_bad_exit(srun, request);
  // One Ctrl-C cancels the step (srun's default needs two within a second).
  srun.push_back("--quit-on-interrupt");
  if (request.resv_ports) srun.push_back("--resv-ports=1");
  auto program = node_program(request);
  srun.insert(srun.end(), program.begin(), program.end());
  return srun;
}

}  // namespace dlaunch::submit
