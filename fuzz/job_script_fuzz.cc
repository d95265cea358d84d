// job_script_fuzz: dlaunch submit's job scripts (submit/job_script.h) from
// hostile option values.
//
// The input is split (FuzzedDataProvider) into values for the settings that
// reach the script (job-name, partition, account, qos, time, constraint,
// mem, output-dir, signal, a list of sbatch-args, which may hold sbatch's
// --array and make the job an array), the ones that reach only the srun
// line (run-args, prefix, the program and its arguments, srun-args) and the
// numbers and switches. Each value comes from a flag or a dlaunch.toml line,
// as dlaunch submit merges them; make_job_request() and job_script() then
// run as dlaunch submit runs them. Checks:
//  - the only failure is InputError, and a value bound for the script that
//    holds a control character (or an empty sbatch-arg) is always refused;
//  - sbatch reads back from the #SBATCH lines exactly the options the values
//    stand for, in order: none lost, none added, none split
//    (job_script_reader.h re-implements sbatch 22.05's rules);
//  - bash reads exactly the intended commands and nothing else: the
//    exports, in node mode the worker log folder and token lines, and one
//    srun command whose words are srun_step_command() with "$log_dir" for
//    the launchers' log folder, no other word holding anything bash would
//    expand; for a job array, the task's folder ("$task_dir", from
//    $SLURM_ARRAY_TASK_ID) in place of the submission folder wherever the
//    script names the job's own files.
// expected_commands() spells out job_script()'s fixed lines: when those
// change, change it too.
//
// Input layout (FuzzedDataProvider, in the order InputReader asks): the
// strings from the front, each ended by a backslash and any other character
// (a backslash itself is written twice); the choices from the back, one
// byte each, the first choice in the last byte. The seeds in
// fuzz/corpus/job_script_fuzz/ are written so: each names what it holds.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "job_script_reader.h"
#include "launch/run_options.h"
#include "submit/job_script.h"
#include "submit/resource_request.h"
#include "submit/submit_settings.h"
#include "util/error.h"
#include "util/shell_words.h"
#include "util/strings.h"

namespace {

using namespace dlaunch;
using namespace dlaunch::submit;
using script_reader::ShellCommand;

constexpr const char* kTimestamp = "20261202_120000";
constexpr std::size_t kMaxValue = 64;

// The settings whose values go into #SBATCH lines as --NAME=VALUE, in the
// order allocation_options() writes them.
const std::vector<std::string> kTextOptions = {"job-name", "partition", "account", "qos",
                                               "time",     "constraint", "mem"};

void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "job_script_fuzz: invariant broken: %s\n%s\n", what, detail.c_str());
  std::abort();
}

void check(bool condition, const char* what, const std::string& detail) {
  if (!condition) fail(what, detail);
}

bool has_control(const std::string& value) {
  for (char c : value) {
    auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) return true;
  }
  return false;
}

std::string show(const std::vector<std::string>& words) {
  std::string text;
  for (const auto& word : words) text += "[" + word + "] ";
  return text;
}

// The values as the fuzzer gave them, to compare the script with.
struct Inputs {
  submit::SubmitSettings settings = submit::default_submit_settings();
  std::vector<std::string> command;
  std::string output_dir = "slurm-outputs";
  bool must_refuse = false;  // a value bound for the script is unfit for it
};

class InputReader {
 public:
  InputReader(const std::uint8_t* data, std::size_t size) : in_(data, size) {}

  Inputs read() {
    for (const auto& name : kTextOptions) {
      if (in_.ConsumeBool()) set_script_text(name, text());
    }
    if (in_.ConsumeBool()) {
      inputs_.output_dir = text();
      set_script_text("output-dir", inputs_.output_dir);
    }
    read_signal();
    std::vector<std::string> sbatch_args = texts(4);
    for (const auto& arg : sbatch_args) inputs_.must_refuse |= arg.empty() || has_control(arg);
    if (!sbatch_args.empty()) set("sbatch-arg", sbatch_args);
    if (auto run_args = texts(3); !run_args.empty()) set("run-arg", run_args);
    if (in_.ConsumeBool()) set("prefix", text());
    read_numbers_and_switches();
    inputs_.command = texts(4);
    if (inputs_.command.empty()) inputs_.command.push_back(text());
    // Last, so the seeds written before srun-args existed keep their meaning.
    std::vector<std::string> srun_args = texts(2);
    for (const auto& arg : srun_args) inputs_.must_refuse |= arg.empty() || has_control(arg);
    if (!srun_args.empty()) set("srun-arg", srun_args);
    return std::move(inputs_);
  }

 private:
  std::string text() { return in_.ConsumeRandomLengthString(kMaxValue); }

  std::vector<std::string> texts(int most) {
    auto count = in_.ConsumeIntegralInRange<std::size_t>(0, static_cast<std::size_t>(most));
    std::vector<std::string> values(count);
    for (auto& value : values) value = text();
    return values;
  }

  // A flag's or a dlaunch.toml line's: only the message differs.
  std::string source(const std::string& name) {
    return in_.ConsumeBool() ? "--" + name : "/fuzz/dlaunch.toml:3 [defaults]";
  }

  void set(const std::string& name, submit::Value value) {
    inputs_.settings.set(name, std::move(value), source(name));
  }

  void set_script_text(const std::string& name, const std::string& value) {
    inputs_.must_refuse |= has_control(value);
    set(name, value);
  }

  // Mostly signals dlaunch takes, so the rest of the script is reached.
  void read_signal() {
    switch (in_.ConsumeIntegralInRange(0, 2)) {
      case 1:
        set_script_text("signal", in_.PickValueInArray({"USR1@60", "R:SIGUSR2@600", "10@0", "usr2"}));
        break;
      case 2: set_script_text("signal", text()); break;
      default: break;
    }
  }

  void read_numbers_and_switches() {
    set("nodes", in_.ConsumeIntegralInRange<std::int64_t>(0, 9));
    set("gpus-per-node", in_.ConsumeIntegralInRange<std::int64_t>(0, 9));
    if (in_.ConsumeBool()) set("cpus-per-gpu", in_.ConsumeIntegralInRange<std::int64_t>(0, 9));
    if (in_.ConsumeBool()) set("exclusive", true);
    if (in_.ConsumeBool()) set("requeue", true);
    if (in_.ConsumeBool()) set("resv-ports", true);
    if (in_.ConsumeBool()) set("launch", std::string("task"));
    // Jobs that outlive a node: their script ends with the exit-code lines,
    // which hold the submission folder's path.
    if (in_.ConsumeBool()) set("spare-nodes", in_.ConsumeIntegralInRange<std::int64_t>(0, 3));
    if (in_.ConsumeBool()) set("min-nodes", in_.ConsumeIntegralInRange<std::int64_t>(0, 9));
  }

  FuzzedDataProvider in_;
  Inputs inputs_;
};

// Where dlaunch submit would put the submission folder (made absolute
// under a current folder of "/fuzz/cwd", without asking the file system).
std::string submission_dir(const std::string& output_dir) {
  std::string absolute = output_dir.starts_with("/") ? output_dir : "/fuzz/cwd/" + output_dir;
  return absolute + "/" + kTimestamp;
}

// The #SBATCH options the values stand for, in the script's order.
std::vector<std::string> expected_options(const Inputs& inputs, const submit::JobRequest& request) {
  const submit::SubmitSettings& settings = inputs.settings;
  std::vector<std::string> options;
  for (const auto& name : kTextOptions) {
    // Without --job-name the job is named after the program (sanitised).
    auto value = settings.string(name);
    if (name == "job-name" && !value) value = request.job_name;
    if (value) options.push_back("--" + name + "=" + *value);
  }
  // A GPU request among the sbatch-args replaces dlaunch's own and may set
  // the count (submit/resource_request.h); without one, the setting's.
  std::int64_t gpus = request.gpus_per_node;
  if (request.own_gpu_request) check(gpus == *settings.integer("gpus-per-node"), "the GPU count changed", "");
  bool task = settings.string("launch") == "task";
  options.push_back("--nodes=" + std::to_string(*settings.integer("nodes") + request.spare_nodes));
  options.push_back("--ntasks-per-node=" + std::to_string(task ? gpus : 1));
  if (gpus > 0 && request.own_gpu_request) options.push_back("--gpus-per-node=" + std::to_string(gpus));
  // CPUs per worker, unless an sbatch-arg asks for CPUs or --exclusive has them all.
  bool cpus_asked = !submit::cpu_request_in(request.sbatch_args) &&
                    (!settings.flag("exclusive") || submit::given_by_user(settings, "cpus-per-gpu"));
  check(request.cpus_per_worker.has_value() == cpus_asked, "CPUs asked for against the rules", "");
  if (auto cpus = request.cpus_per_worker)
    options.push_back("--cpus-per-task=" +
                      std::to_string(task ? *cpus : *cpus * std::max<std::int64_t>(1, gpus)));
  if (settings.flag("exclusive")) options.push_back("--exclusive");
  if (request.signal) options.push_back("--signal=" + request.signal->sbatch_value());
  if (settings.flag("requeue")) options.push_back("--requeue");
  if (request.outlives_a_node()) options.push_back("--no-kill");
  if (request.array) {
    // An --array among the sbatch-args is taken out, checked, and written by dlaunch.
    options.push_back("--array=" + request.array->spec);
    options.push_back("--output=" + request.submission_dir + "/task_%a/slurm-%A_%a.log");
  } else {
    options.push_back("--output=" + request.submission_dir + "/slurm-%j.log");
  }
  options.push_back("--open-mode=append");
  for (const auto& arg : request.sbatch_args) options.push_back(arg);
  if (!request.array) check(request.sbatch_args == settings.list("sbatch-arg"), "sbatch-args lost", "");
  return options;
}

// Where the script keeps the job's own file NAME: in the submission
// folder, or in an array task's folder.
std::string own_file(const submit::JobRequest& request, const std::string& name) {
  return (request.array ? std::string("$task_dir") : request.submission_dir) + "/" + name;
}

// The srun command bash must read: srun_step_command(), the launchers'
// --log-dir taken from the script's $log_dir in node mode, an array task's
// exit-code file in its folder. Only the words after srun's own options and
// the srun-args are dlaunch run's.
std::vector<std::string> expected_srun(const submit::JobRequest& request) {
  std::vector<std::string> words = submit::srun_step_command(request);
  if (request.launch == submit::LaunchMode::kTask) return words;
  // srun's own options never hold the step's dlaunch; the srun-args may. In
  // a container (an srun-arg --container-image) it is the image's.
  submit::JobRequest without_srun_args = request;
  without_srun_args.srun_args.clear();
  std::vector<std::string> own = submit::srun_step_command(without_srun_args);
  const std::string dlaunch = request.container ? request.container->dlaunch : "/opt/dlaunch";
  std::size_t program = request.srun_args.size();
  while (own[program - request.srun_args.size()] != dlaunch) ++program;
  // The first of each is dlaunch's own; a run-arg may name them again.
  bool log_dir_seen = false, exit_code_file_seen = false, bench_record_seen = false;
  for (std::size_t i = program + 1; i < words.size(); ++i) {
    if (words[i - 1] == "--log-dir" && !log_dir_seen) {
      words[i] = "$log_dir";
      log_dir_seen = true;
    }
    if (words[i - 1] == "--exit-code-file" && !exit_code_file_seen) {
      if (request.array) words[i] = own_file(request, submit::kExitCodeFileName);
      exit_code_file_seen = true;
    }
    // An array task keeps its bench record in its own folder, as its exit code.
    if (words[i - 1] == "--bench-record" && !bench_record_seen) {
      if (request.array) words[i] = own_file(request, submit::kBenchRecordFileName);
      bench_record_seen = true;
    }
  }
  return words;
}

// Every command bash must read from the script, in order.
std::vector<std::vector<std::string>> expected_commands(const submit::JobRequest& request) {
  const std::string& dir = request.submission_dir;
  std::vector<std::vector<std::string>> commands = {{"export", std::string("TIMESTAMP=") + kTimestamp}};
  if (request.array) {
    commands.push_back({"task_dir=" + dir + "/task_$SLURM_ARRAY_TASK_ID"});
    commands.push_back({"export", "OUTPUT_DIR=$task_dir"});
  } else {
    commands.push_back({"export", "OUTPUT_DIR=" + dir});
  }
  if (request.launch == submit::LaunchMode::kNode) {
    std::vector<std::vector<std::string>> node_lines = {
        {"log_dir=" + own_file(request, "logs")},
        {"if", "[", "${SLURM_RESTART_COUNT:-0}", "!=", "0", "];", "then"},
        {"log_dir=" + own_file(request, "logs/requeue_$SLURM_RESTART_COUNT")},
        {"echo", "dlaunch: job $SLURM_JOB_ID started again after requeue $SLURM_RESTART_COUNT; "
                 "worker logs in $log_dir"},
        {"fi"},
        {"DLAUNCH_RDZV_TOKEN=$(cat", dir + "/rdzv.token)", "||", "exit", "1"},
        {"export", "DLAUNCH_RDZV_TOKEN"}};
    commands.insert(commands.end(), node_lines.begin(), node_lines.end());
  }
  if (request.launch == submit::LaunchMode::kTask) {
    commands.push_back(expected_srun(request));
    return commands;
  }
  // In node mode srun runs under the step guard, which ends it by the job's
  // verdict in the exit-code file, after the launchers' shutdown timeout
  // and 5 s (job_script.cc, step_guard.h).
  std::int64_t shutdown = 30;
  if (auto value = launch::run_option_value(request.run_args, "--shutdown-timeout"))
    shutdown = util::parse_int(*value).value_or(shutdown);
  std::vector<std::string> step{"/opt/dlaunch", "__run-step", own_file(request, submit::kExitCodeFileName),
                                std::to_string(shutdown + submit::kStepGraceMarginSeconds), "--"};
  auto srun = expected_srun(request);
  step.insert(step.end(), srun.begin(), srun.end());
  commands.push_back(step);
  return commands;
}

// Where srun begins in the words of a command: the first word, or the one
// after the step guard's "--"; WORDS.size() when the command is no srun.
std::size_t srun_start(const std::vector<std::string>& words) {
  if (!words.empty() && words.front() == "srun") return 0;
  if (words.size() > 5 && words[1] == "__run-step" && words[4] == "--" && words[5] == "srun") return 5;
  return words.size();
}

// Words that carry a value must mean exactly their text to bash; a word
// that starts with "$log_dir" or "$task_dir" is the script's own variable.
void check_plain(const ShellCommand& command, std::size_t except, const std::string& script) {
  for (std::size_t i = 0; i < command.words.size(); ++i) {
    if (i == except || command.words[i].starts_with("$task_dir/")) continue;
    check(!command.special[i], "a word bash would expand or treat specially",
          command.words[i] + "\nscript:\n" + script);
  }
}

void check_bash_reading(const submit::JobRequest& request, const std::string& script) {
  script_reader::ShellScript shell = script_reader::read_shell_commands(script);
  check(shell.error.empty(), "bash cannot read the script", shell.error + "\n" + script);
  auto expected = expected_commands(request);
  check(shell.commands.size() == expected.size(), "bash reads a different number of commands",
        std::to_string(shell.commands.size()) + " instead of " + std::to_string(expected.size()) +
            "\nscript:\n" + script);
  std::size_t sruns = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    check(shell.commands[i].words == expected[i], "bash reads another command",
          "got:      " + show(shell.commands[i].words) + "\nexpected: " + show(expected[i]) +
              "\nscript:\n" + script);
    if (srun_start(shell.commands[i].words) < shell.commands[i].words.size()) ++sruns;
  }
  check(sruns == 1, "not exactly one srun command", script);
  check_plain(shell.commands[0], 0, script);
  // An array's task_dir line names $SLURM_ARRAY_TASK_ID; its folder must mean its text.
  if (request.array) {
    const std::string& task_dir = shell.commands[1].words[0];
    check(task_dir == "task_dir=" + request.submission_dir + "/task_$SLURM_ARRAY_TASK_ID" &&
              script.find(util::shell_join({request.submission_dir + "/task_"}) + "\"$SLURM_ARRAY_TASK_ID\"") !=
                  std::string::npos,
          "the task folder is not the submission folder's task_<i>", script);
  } else {
    check_plain(shell.commands[1], 0, script);
  }
  std::size_t srun_at = 0;
  while (srun_start(shell.commands[srun_at].words) == shell.commands[srun_at].words.size()) ++srun_at;
  const ShellCommand& srun = shell.commands[srun_at];
  // Every word must mean exactly its text, the step guard's verdict file
  // too, except the script's own $log_dir (and an array task's $task_dir).
  std::size_t log_dir = srun.words.size();
  for (std::size_t i = 0; i < srun.words.size(); ++i) {
    if (srun.words[i] == "$log_dir" && srun.special[i] && request.launch == submit::LaunchMode::kNode) {
      log_dir = i;
      break;
    }
  }
  check_plain(srun, log_dir, script);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Inputs inputs = InputReader(data, size).read();
  std::optional<submit::JobRequest> request;
  try {
    request = submit::make_job_request(inputs.settings, inputs.command, "/opt/dlaunch",
                               submission_dir(inputs.output_dir), kTimestamp);
  } catch (const util::InputError&) {
    return 0;
  }
  check(!inputs.must_refuse, "a control character or an empty sbatch-arg was accepted",
        submit::job_script(*request));
  check(!request->job_name || !has_control(*request->job_name),
        "the job name holds a control character", request->job_name.value_or(""));
  const std::string script = submit::job_script(*request);

  script_reader::SbatchDirectives sbatch = script_reader::read_sbatch_directives(script);
  check(sbatch.error.empty(), "sbatch cannot read the #SBATCH lines", sbatch.error + "\n" + script);
  std::vector<std::string> expected = expected_options(inputs, *request);
  check(sbatch.arguments == expected, "sbatch reads other options than intended",
        "got:      " + show(sbatch.arguments) + "\nexpected: " + show(expected) +
            "\nscript:\n" + script);

  check_bash_reading(*request, script);
  return 0;
}
