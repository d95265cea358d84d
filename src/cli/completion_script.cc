#include "cli/completion_script.h"

#include <fmt/format.h>

#include "util/strings.h"

namespace dlaunch::cli {
namespace {

using util::CommandLineSpec;
using util::OptionSpec;

// Every spelling of every option of COMMAND_LINE, or of the valued ones only.
std::vector<std::string> option_names(const CommandLineSpec& command_line, bool valued_only) {
  std::vector<std::string> names;
  for (const OptionSpec& option : command_line.options) {
    if (valued_only && !option.takes_value) continue;
    names.insert(names.end(), option.names.begin(), option.names.end());
  }
  return names;
}

// An option's help cut to its first clause, for the one line zsh and fish
// show beside it.
std::string short_help(std::string_view help) {
  std::size_t end = help.size();
  for (std::string_view stop : {". ", "; ", " ("}) end = std::min(end, help.find(stop));
  std::string text(help.substr(0, end));
  if (text.size() > 70) text = text.substr(0, text.rfind(' ', 67)) + "...";
  return text;
}

bool is_file(const OptionSpec& option) { return option.placeholder == "FILE"; }
bool is_folder(const OptionSpec& option) { return option.placeholder == "DIR"; }

// ---- bash ----------------------------------------------------------------

std::string bash_case(const CompletedCommand& command) {
  const CommandLineSpec& line = command.command_line;
  return fmt::format("    {})\n      options='{}'\n      valued='{}'\n      words='{}'\n      ;;\n",
                     command.name, util::join(option_names(line, false), " "),
                     util::join(option_names(line, true), " "), util::join(line.words, " "));
}

std::string bash_choices(const CompletedCommand& command) {
  std::string text;
  for (const OptionSpec& option : command.command_line.options) {
    auto choices = util::placeholder_choices(option.placeholder);
    if (choices.empty()) continue;
    for (const auto& name : option.names)
      text += fmt::format("    '{} {}') choices='{}' ;;\n", command.name, name, util::join(choices, " "));
  }
  return text;
}

// ---- zsh -----------------------------------------------------------------

// Text inside single quotes.
std::string zsh_quoted(std::string_view text) {
  std::string result;
  for (char c : text) result += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return result;
}

// Text inside a single-quoted _arguments spec: no quote, and no bracket or
// colon that _arguments would read as syntax.
std::string zsh_text(std::string_view text) {
  std::string result;
  for (char c : text) {
    if (c == '\'') result += "'\\''";
    else if (c == '[' || c == ']' || c == ':') result += std::string("\\") + c;
    else result += c;
  }
  return result;
}

std::string zsh_action(const OptionSpec& option) {
  auto choices = util::placeholder_choices(option.placeholder);
  if (!choices.empty()) return fmt::format("({})", util::join(choices, " "));
  if (is_folder(option)) return "_files -/";
  if (is_file(option)) return "_files";
  return "";
}

std::string zsh_option(const OptionSpec& option) {
  std::string names = option.names.size() == 1
                          ? option.names.front()
                          : fmt::format("{{{}}}", util::join(option.names, ","));
  std::string spec = fmt::format("'*'{}'[{}]", names, zsh_text(short_help(option.help)));
  if (option.takes_value)
    spec += fmt::format(":{}:{}", zsh_text(option.placeholder), zsh_action(option));
  return spec + "'";
}

std::string zsh_case(const CompletedCommand& command) {
  const CommandLineSpec& line = command.command_line;
  std::vector<std::string> specs;
  for (const OptionSpec& option : line.options) specs.push_back(zsh_option(option));
  if (!line.words.empty()) {
    specs.push_back(fmt::format("'1:argument:({})'", util::join(line.words, " ")));
    specs.push_back("'*::argument:_files'");
  } else if (line.takes_program) {
    specs.push_back("'*::program and its arguments:_normal'");
  } else {
    specs.push_back("'*:argument:_files'");
  }
  return fmt::format("    ({})\n      _arguments -S \\\n        {}\n      ;;\n", command.name,
                     util::join(specs, " \\\n        "));
}

// ---- fish ----------------------------------------------------------------

std::string fish_text(std::string_view text) {
  std::string result;
  for (char c : text) {
    if (c == '\'' || c == '\\') result += '\\';
    result += c;
  }
  return result;
}

std::string fish_option(const std::string& command, const OptionSpec& option) {
  std::string line = fmt::format("complete -c dlaunch -n '__fish_seen_subcommand_from {}'", command);
  for (const auto& name : option.names)
    line += name.starts_with("--") ? " -l " + name.substr(2) : " -s " + name.substr(1);
  auto choices = util::placeholder_choices(option.placeholder);
  if (!choices.empty()) line += fmt::format(" -x -a '{}'", util::join(choices, " "));
  else if (is_file(option) || is_folder(option)) line += " -r -F";
  else if (option.takes_value) line += " -x";
  return line + fmt::format(" -d '{}'\n", fish_text(short_help(option.help)));
}

std::string fish_command(const CompletedCommand& command) {
  std::string text = fmt::format("complete -c dlaunch -n __fish_use_subcommand -a {} -d '{}'\n",
                                 command.name, fish_text(command.summary));
  for (const OptionSpec& option : command.command_line.options) text += fish_option(command.name, option);
  if (!command.command_line.words.empty())
    text += fmt::format("complete -c dlaunch -n '__fish_seen_subcommand_from {}' -a '{}'\n", command.name,
                        util::join(command.command_line.words, " "));
  if (command.command_line.takes_program)
    text += fmt::format("complete -c dlaunch -n '__fish_seen_subcommand_from {}' -F\n", command.name);
  return text;
}

}  // namespace

std::string bash_completion(const std::vector<CompletedCommand>& commands) {
  std::vector<std::string> names;
  std::string cases, choices;
  for (const auto& command : commands) {
    names.push_back(command.name);
    cases += bash_case(command);
    choices += bash_choices(command);
  }
  return fmt::format(
      R"(# bash completion for dlaunch, written by `dlaunch completion bash` from its parsers.
# Load it with: source <(dlaunch completion bash)
_dlaunch() {{
  local cur=${{COMP_WORDS[COMP_CWORD]}} prev=${{COMP_WORDS[COMP_CWORD-1]}}
  COMPREPLY=()
  if ((COMP_CWORD == 1)); then
    COMPREPLY=($(compgen -W '{}' -- "$cur"))
    return 0
  fi
  local options='' valued='' words='' choices=''
  case ${{COMP_WORDS[1]}} in
{}    *) return 0 ;;
  esac
  case "${{COMP_WORDS[1]}} $prev" in
{}  esac
  if [[ " $valued " == *" $prev "* ]]; then
    # An option's value: its fixed values, else the shell's default (files).
    [[ -n $choices ]] && COMPREPLY=($(compgen -W "$choices" -- "$cur"))
    return 0
  fi
  # From the first argument on (PROGRAM, an action) the words are not dlaunch's.
  local i
  for ((i = 2; i < COMP_CWORD; i++)); do
    [[ ${{COMP_WORDS[i]}} == -- ]] && return 0
    [[ ${{COMP_WORDS[i]}} != -* && " $valued " != *" ${{COMP_WORDS[i-1]}} "* ]] && return 0
  done
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$options" -- "$cur"))
  elif [[ -n $words ]]; then
    COMPREPLY=($(compgen -W "$words" -- "$cur"))
  fi
  return 0
}}
complete -o default -F _dlaunch dlaunch
)",
      util::join(names, " "), cases, choices);
}

std::string zsh_completion(const std::vector<CompletedCommand>& commands) {
  std::string described, cases;
  for (const auto& command : commands) {
    described += fmt::format("    '{}:{}'\n", command.name, zsh_quoted(command.summary));
    cases += zsh_case(command);
  }
  return fmt::format(
      R"(#compdef dlaunch
# zsh completion for dlaunch, written by `dlaunch completion zsh` from its parsers.
# Load it with: source <(dlaunch completion zsh), or install it as _dlaunch in $fpath.
_dlaunch() {{
  local -a commands
  commands=(
{}  )
  if (( CURRENT == 2 )); then
    _describe -t commands 'dlaunch command' commands
    return
  fi
  local command=${{words[2]}}
  shift words
  (( CURRENT-- ))
  case $command in
{}  esac
}}
if [[ $funcstack[1] == _dlaunch ]]; then
  _dlaunch "$@"
else
  compdef _dlaunch dlaunch
fi
)",
      described, cases);
}

std::string fish_completion(const std::vector<CompletedCommand>& commands) {
  std::string text =
      "# fish completion for dlaunch, written by `dlaunch completion fish` from its parsers.\n"
      "# Load it with: dlaunch completion fish | source\n"
      "complete -c dlaunch -f\n";
  for (const auto& command : commands) text += fish_command(command);
  return text;
}

std::optional<std::string> completion_script(std::string_view shell,
                                             const std::vector<CompletedCommand>& commands) {
  if (shell == "bash") return bash_completion(commands);
  if (shell == "zsh") return zsh_completion(commands);
  if (shell == "fish") return fish_completion(commands);
  return std::nullopt;
}

}  // namespace dlaunch::cli
