#include "submit/before_sbatch.h"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <variant>

#include "launch/hand_off_check.h"
#include "launch/run_options.h"
#include "launch/token_setting.h"
#include "process/worker_process.h"
#include "util/error.h"
#include "util/strings.h"
#include "util/subprocess.h"

namespace dlaunch::submit {
namespace {

// How long `bash -n` and a script's compile may take: a cold interpreter on
// a shared file system takes a second or two; a stuck one must not hold up
// the submission.
constexpr const char* kCheckSeconds = "10";

// Where the node option NAME ("--prefix") came from: a run-arg that spells
// it (those come last on the nodes' command line, so theirs is the value
// read), else the submit setting of the same name.
std::string origin_in_settings(const SubmitSettings& settings, std::string_view name) {
  const std::string option(name);
  if (const auto* run_arg = settings.find("run-arg")) {
    for (const auto& word : std::get<std::vector<std::string>>(run_arg->value)) {
      if (word == option || word.starts_with(option + "="))
        return fmt::format("run-arg '{}' (from {})", word, run_arg->source);
    }
  }
  const std::string key = option.substr(option.find_first_not_of('-'));
  if (const auto* setting = settings.find(key); setting != nullptr && find_key(key) != nullptr)
    return fmt::format("{} (from {})", key, setting->source);
  return "";
}

// Whether RUN_ARGS give one of NAMES before the program.
bool gives_flag(const std::vector<std::string>& run_args, std::initializer_list<std::string_view> names) {
  for (const std::string& arg : run_args) {
    if (arg == "--") break;
    if (std::find(names.begin(), names.end(), arg) != names.end()) return true;
  }
  return false;
}

// The last lines of TEXT, where Python and bash say what is wrong.
std::string last_lines(const std::string& text, std::size_t count) {
  auto lines = util::split(std::string(util::trim(text)), '\n');
  std::size_t from = lines.size() > count ? lines.size() - count : 0;
  std::string shown;
  for (std::size_t i = from; i < lines.size(); ++i) shown += "\n  " + lines[i];
  return shown;
}

// A script's syntax, as PYTHON reads it: compiled in memory, so no
// __pycache__ is written beside it. nullopt when it compiles, or when the
// check itself could not be made (then the node's Python judges).
std::optional<std::string> syntax_problem(const std::string& script, const std::string& python) {
  static constexpr const char* kCompile =
      "import sys\n"
      "compile(open(sys.argv[1], 'rb').read(), sys.argv[1], 'exec')\n";
  try {
    auto run = util::run_captured({"timeout", "-s", "KILL", kCheckSeconds, python, "-c", kCompile, script});
    bool syntax = run.err.find("SyntaxError") != std::string::npos ||
                  run.err.find("IndentationError") != std::string::npos ||
                  run.err.find("TabError") != std::string::npos;
    if (run.exit_code == 0 || !syntax) return std::nullopt;
    return last_lines(run.err, 5);
  } catch (const util::SystemError&) {
    return std::nullopt;  // no timeout(1) here: the node's Python will say it
  }
}

// The job's interpreter, when this machine has it too.
std::optional<std::string> python_here(const std::string& python) {
  return process::find_executable(python, util::Environment::from_process());
}

void check_python_script(const std::string& script, const std::string& python) {
  if (!std::filesystem::exists(script))
    throw util::InputError(fmt::format("cannot submit '{}': no such program here. The nodes run it from "
                                       "the shared file system, so give a path that exists on this machine",
                                       script));
  auto here = python_here(python);
  if (!here) return;  // another interpreter than the nodes' would judge it
  if (auto problem = syntax_problem(script, *here))
    throw util::InputError(fmt::format("cannot submit '{}': {} cannot compile it:{}\nFix the script (checked "
                                       "here, before sbatch, with the job's interpreter; nothing was run)",
                                       script, *here, *problem));
}

}  // namespace

void check_node_arguments(const JobRequest& request, const SubmitSettings& settings, bool srun) {
  launch::HandOff hand_off;
  hand_off.before = srun ? "srun" : "sbatch";
  hand_off.run_args = node_run_arguments(request);
  hand_off.node_environment = launch::slurm_step_stand_in(request.nodes + request.spare_nodes,
                                                          request.gpus_per_node);
  // The job script exports a fresh secret to every node (token_lines);
  // a stand-in of the length it has stands for it.
  if (request.token_file) hand_off.node_environment.set(launch::kTokenVariable, std::string(64, 'f'));
  hand_off.origin_of = [&settings](std::string_view name) { return origin_in_settings(settings, name); };
  hand_off.exec = request.launch == LaunchMode::kTask;
  (void)launch::check_hand_off(hand_off);
}

void check_setup_lines(const std::vector<std::string>& lines, const std::string& source) {
  if (lines.empty()) return;
  std::string text;
  for (const auto& line : lines) text += line + "\n";
  util::CapturedRun bash;
  try {
    // -n reads the lines and runs none of them.
    bash = util::run_captured({"timeout", "-s", "KILL", kCheckSeconds, "bash", "-n", "-c", text});
  } catch (const util::SystemError&) {
    return;  // no timeout(1) here: the batch host's bash will say it
  }
  // 126, 127: no bash here; 124, 137: it took too long. Neither is the lines' fault.
  if (bash.exit_code == 0 || bash.exit_code == 124 || bash.exit_code >= 126) return;
  throw util::InputError(fmt::format("setup (from {}) is not valid bash:{}\nThe job script runs these lines "
                                     "before srun; fix them (checked with bash -n: nothing was run)",
                                     source, last_lines(bash.err, 5)));
}

void check_program_here(const std::vector<std::string>& command, const std::vector<std::string>& run_args,
                        const std::string& python) {
  const std::string& program = command.front();
  // A module is found by the nodes' Python, not as a file.
  if (gives_flag(run_args, {"-m", "--module"})) return;
  if (program.ends_with(".py") && !gives_flag(run_args, {"--no-python"})) return check_python_script(program, python);
  if (process::find_executable(program, util::Environment::from_process())) return;
  std::error_code ignored;
  if (program.find('/') != std::string::npos && std::filesystem::is_regular_file(program, ignored))
    throw util::InputError(fmt::format("cannot submit '{}': the file is not executable, and the nodes run it "
                                       "directly. Make it executable (chmod +x {}), or let Python run it "
                                       "(--run-arg=--run-path for a script not named .py)",
                                       program, program));
  throw util::InputError(fmt::format("cannot submit '{}': no such program here. The nodes run it from "
                                     "the shared file system, so give a path that exists on this machine",
                                     program));
}

std::string job_python(const SubmitSettings& settings) {
  // A run-arg comes after the python setting on the nodes' command line: its value is the one read.
  if (auto given = launch::run_option_value(settings.list("run-arg"), "--python")) return *given;
  return settings.string("python").value_or("python3");
}

}  // namespace dlaunch::submit
