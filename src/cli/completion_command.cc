#include "cli/completion_command.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <string_view>

#include "util/command_line.h"
#include "util/error.h"
#include "util/strings.h"

namespace dlaunch::cli {
namespace {

constexpr const char* kCompletionDescription =
    "Print a completion script for bash, zsh or fish that knows every dlaunch command and its "
    "options. It is written from dlaunch's own parsers, so it matches this dlaunch.";

void configure_completion(CLI::App& app, std::string& shell) {
  util::set_usage(app, "dlaunch completion bash|zsh|fish");
  app.add_option("shell", shell, "The shell to complete in")->type_name("bash|zsh|fish");
  util::finish_help(
      app, {
               {"source <(dlaunch completion bash)", "complete dlaunch in this bash session"},
               {"dlaunch completion bash > ~/.local/share/bash-completion/completions/dlaunch",
                "for every new bash session (the .deb and cmake --install put it in place)"},
               {"dlaunch completion zsh > ~/.zfunc/_dlaunch",
                "for zsh, with ~/.zfunc in $fpath before compinit runs"},
               {"dlaunch completion fish > ~/.config/fish/completions/dlaunch.fish", "for fish"},
           });
}

}  // namespace

std::vector<CompletedCommand> completed_commands(std::span<const Command> commands) {
  std::vector<CompletedCommand> completed;
  for (const Command& command : commands) {
    if (std::string_view(command.name).starts_with("__")) continue;
    util::CommandLineSpec line = command.command_line ? command.command_line() : util::CommandLineSpec{};
    completed.push_back({command.name, command.summary, std::move(line)});
  }
  return completed;
}

int completion_command(const CommandArgs& args, std::span<const Command> commands) {
  CLI::App app(kCompletionDescription, "dlaunch completion");
  std::string shell;
  configure_completion(app, shell);
  if (!util::parse_command_line(app, args, "dlaunch completion")) return 0;
  auto script = completion_script(shell, completed_commands(commands));
  if (!script)
    throw util::UsageError(fmt::format("dlaunch completion: {}; expected one of {} (e.g. dlaunch completion bash)",
                                       shell.empty() ? "no shell given" : fmt::format("unknown shell '{}'", shell),
                                       util::join(kCompletionShells, ", ")));
  fmt::print("{}", *script);
  return 0;
}

util::CommandLineSpec completion_command_line() {
  CLI::App app(kCompletionDescription, "dlaunch completion");
  std::string shell;
  configure_completion(app, shell);
  util::CommandLineSpec spec = util::describe_command_line(app);
  spec.words = kCompletionShells;
  return spec;
}

}  // namespace dlaunch::cli
