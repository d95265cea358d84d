// dlaunch's answer to a first word that is not a command (cli/first_word.h).
#include "cli/first_word.h"

#include <filesystem>
#include <fmt/format.h>
#include <optional>
#include <system_error>

#include "launch/run_options.h"
#include "submit/submit_settings.h"
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

[[noreturn]] void suggest_run(const std::vector<std::string>& words, const std::string& what) {
  throw util::UsageError(fmt::format("{}. Did you mean '{}'? (dlaunch run starts the workers; {})", what,
                                     "dlaunch run " + util::shell_join(words), kHelpPointer));
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
    if (word == launcher) return "run";
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
    throw util::UsageError(fmt::format("'{}' is an option of dlaunch submit, not a command. Did you mean '{}'? "
                                       "(dlaunch submit asks Slurm for the nodes; {})",
                                       first, "dlaunch submit " + util::shell_join(words), kHelpPointer));
  if ((first == "-np" || first == "-n") && words.size() > 1) {
    std::vector<std::string> meant(words.begin() + 2, words.end());
    meant.insert(meant.begin(), {"--nproc-per-node", words[1]});
    suggest_run(meant, fmt::format("'{}' is mpirun's count of processes, not a command; dlaunch counts workers "
                                   "per node",
                                   first));
  }
  if (auto command = command_for_launcher(first)) {
    std::vector<std::string> rest(words.begin() + 1, words.end());
    throw util::UsageError(fmt::format("'{}' is not a dlaunch command. Did you mean 'dlaunch {} {}'? (dlaunch {} "
                                       "takes torchrun's options; {})",
                                       first, *command, util::shell_join(rest), *command, kHelpPointer));
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
