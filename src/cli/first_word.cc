// dlaunch's answer to a first word that is not a command (cli/first_word.h).
#include "cli/first_word.h"

#include <filesystem>
#include <fmt/format.h>
#include <optional>
#include <system_error>

#include "launch/run_options.h"
#include "submit/submit_options.h"
#include "submit/submit_settings.h"
#include "util/environment.h"
#include "util/error.h"
#include "util/shell_words.h"
#include "util/strings.h"

namespace dlaunch::cli {
namespace {

constexpr const char* kHelpPointer = "'dlaunch help' lists the commands.";

// Whether WORD reads as the PROGRAM of `dlaunch run`: a Python script, a
// path, or a file here.
bool looks_like_program(const std::string& word) {
  std::error_code ignored;
  return word.ends_with(".py") || word.find('/') != std::string::npos ||
         std::filesystem::is_regular_file(word, ignored);
}

// The option of dlaunch itself WORD was meant to be: -V and -v are other
// programs' spelling of --version.
std::optional<std::string> top_level_option_meant(const std::string& word) {
  if (word == "-V" || word == "-v") return "--version";
  return util::closest_match(word, {"--help", "--version"});
}

// A line is suggested only when it works: why COMMAND's own parser
// would refuse WORDS, or "" when it takes them. Parsing reads nothing but
// the words (the environment is left out), and starts nothing.
std::string refusal_of(const std::string& command, const std::vector<std::string>& words) {
  try {
    if (command == "run") launch::parse_run_options(words, util::Environment(), /*require_program=*/true);
    else submit::parse_submit_options(words);
  } catch (const util::InputError& error) {  // UsageError too
    return error.what();
  }
  return "";
}

// "WHAT. Did you mean 'dlaunch COMMAND WORDS'? (WHY; ...)" when that line
// parses; else what COMMAND is for and why that line would not do.
[[noreturn]] void suggest(const std::string& command, const std::vector<std::string>& words,
                          const std::string& what, const std::string& why) {
  std::string refused = refusal_of(command, words);
  if (refused.empty())
    throw util::UsageError(fmt::format("{}. Did you mean '{}'? ({}; {})", what,
                                       fmt::format("dlaunch {} {}", command, util::shell_join(words)), why,
                                       kHelpPointer));
  throw util::UsageError(fmt::format("{}. {}; 'dlaunch {} {}' would not do either: {} {}", what, why, command,
                                     util::shell_join(words), refused, kHelpPointer));
}

[[noreturn]] void suggest_run(const std::vector<std::string>& words, const std::string& what) {
  suggest("run", words, what, "dlaunch run starts the workers");
}

// The index of the first word of WORDS that reads as a program.
std::size_t program_index(const std::vector<std::string>& words) {
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (looks_like_program(words[i])) return i;
  }
  return words.size();
}

// `dlaunch srun -N 2 train.py`: srun's options stay srun's, and srun
// starts dlaunch run on every node: "srun -N 2 dlaunch run train.py".
[[noreturn]] void suggest_srun_line(const std::vector<std::string>& rest) {
  std::size_t program = program_index(rest);
  std::vector<std::string> srun_words(rest.begin(), rest.begin() + static_cast<long>(program));
  std::vector<std::string> run_words(rest.begin() + static_cast<long>(program), rest.end());
  std::string run_line = run_words.empty() ? "dlaunch run PROGRAM" : "dlaunch run " + util::shell_join(run_words);
  std::string srun_line = srun_words.empty() ? "srun" : "srun " + util::shell_join(srun_words);
  throw util::UsageError(fmt::format(
      "'srun' is not a dlaunch command. Inside an allocation, srun starts dlaunch run on every node, one task "
      "each: '{} --ntasks-per-node 1 {}'; to ask Slurm for the nodes too, 'dlaunch submit --srun --nodes N "
      "...'. {}",
      srun_line, run_line, kHelpPointer));
}

// Whether WORD ("--nodes", "--partition=gpu") is an option of dlaunch submit.
bool is_submit_option(const std::string& word) {
  if (!word.starts_with("--")) return false;
  std::string name = word.substr(2, word.find('=') - 2);
  for (const auto& key : submit::submit_keys()) {
    if (name == key.name) return true;
  }
  return false;
}

// Other launchers typed as dlaunch's command, and the command that does
// their work.
std::optional<std::string> command_for_launcher(const std::string& word) {
  for (const char* launcher : {"torchrun", "launch", "mpirun", "mpiexec", "horovodrun", "deepspeed", "accelerate",
                               "srun", "python", "python3"}) {
    if (word == launcher) return "run";  // srun: suggest_srun_line
  }
  if (word == "sbatch") return "submit";
  return std::nullopt;
}

}  // namespace

std::string short_usage(std::span<const Command> commands) {
  std::vector<std::string> names;
  for (const auto& command : commands) {
    if (is_public(command)) names.emplace_back(command.name);
  }
  return fmt::format(
      "Usage: dlaunch COMMAND [options] [ARGS...]\n"
      "Commands: {}\n"
      "'dlaunch help' says what each does; 'dlaunch COMMAND --help' shows its options and examples,\n"
      "e.g. dlaunch run --nproc-per-node 4 train.py\n",
      util::join(names, ", "));
}

const Command& command_named_first(std::span<const Command> commands, const std::vector<std::string>& words) {
  const std::string& first = words.front();
  for (const auto& command : commands) {
    if (first == command.name) return command;
  }
  if (launch::run_option_kind(first) != launch::RunOptionKind::kUnknown)
    suggest_run(words, fmt::format("'{}' is an option of dlaunch run, not a command", first));
  if (is_submit_option(first))
    suggest("submit", words, fmt::format("'{}' is an option of dlaunch submit, not a command", first),
            "dlaunch submit asks Slurm for the nodes");
  if ((first == "-np" || first == "-n") && words.size() > 1) {
    std::vector<std::string> meant(words.begin() + 2, words.end());
    meant.insert(meant.begin(), {"--nproc-per-node", words[1]});
    suggest_run(meant, fmt::format("'{}' is mpirun's count of processes, not a command; dlaunch counts workers "
                                   "per node",
                                   first));
  }
  if (auto command = command_for_launcher(first)) {
    std::vector<std::string> rest(words.begin() + 1, words.end());
    if (first == "srun") suggest_srun_line(rest);
    suggest(*command, rest, fmt::format("'{}' is not a dlaunch command", first),
            fmt::format("dlaunch {} takes torchrun's options", *command));
  }
  if (first.starts_with("-")) {
    std::string hint;
    if (auto meant = top_level_option_meant(first)) hint = fmt::format(" Did you mean '{}'?", *meant);
    throw util::UsageError(fmt::format("unknown option '{}' for dlaunch.{} The first word is a command, "
                                       "--help or --version; {}",
                                       first, hint, kHelpPointer));
  }
  if (looks_like_program(first)) suggest_run(words, fmt::format("'{}' is not a command", first));
  return find_command(commands, first);  // throws, naming the nearest command
}

}  // namespace dlaunch::cli
