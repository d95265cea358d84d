#include "cli/help_command.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "util/command_line.h"

namespace dlaunch::cli {
namespace {

void configure_help(CLI::App& app, std::string& command) {
  util::set_usage(app, "dlaunch help [COMMAND]");
  app.add_option("command", command, "The command to show the help of")->type_name("COMMAND");
  util::finish_help(app, {
                             {"dlaunch help", "every command, with a line on each"},
                             {"dlaunch help submit", "submit's options and examples, as dlaunch submit --help"},
                             {"dlaunch help completion", "how to make the shell complete dlaunch's options"},
                         });
}

// The list `dlaunch help` and `dlaunch --help` print, and dlaunch(1) shows.
void print_overview(std::span<const Command> commands) {
  fmt::print("Usage: dlaunch COMMAND [options]\n\n"
             "Launch distributed training on Slurm and SSH clusters.\n\nCommands:\n");
  for (const auto& command : commands) {
    if (is_public(command)) fmt::print("  {:<12} {}\n", command.name, command.summary);
  }
  fmt::print(
      "\n'dlaunch COMMAND --help' (or 'dlaunch help COMMAND') shows a command's options and examples.\n"
      "\nExamples:\n"
      "  dlaunch run --nproc-per-node 4 train.py --lr 0.1\n"
      "      four workers on this machine, torchrun's way\n"
      "  dlaunch submit --nodes 2 --gpus-per-node 4 --wait train.py\n"
      "      a two-node Slurm job, followed until it ends\n"
      "  dlaunch ssh --hosts node1,node2 --nproc-per-node 8 train.py\n"
      "      the same on two hosts reached over ssh\n"
      "  source <(dlaunch completion bash)\n"
      "      complete dlaunch's commands and options in bash\n");
}

}  // namespace

int help_command(const CommandArgs& args, std::span<const Command> commands) {
  CLI::App app("Show the list of commands, or a command's help.", "dlaunch help");
  std::string command;
  configure_help(app, command);
  if (!util::parse_command_line(app, args, "dlaunch help")) return 0;
  if (!command.empty()) return find_command(commands, command).function({"--help"});
  print_overview(commands);
  return 0;
}

util::CommandLineSpec help_command_line(std::span<const Command> commands) {
  CLI::App app("Show the list of commands, or a command's help.", "dlaunch help");
  std::string command;
  configure_help(app, command);
  util::CommandLineSpec spec = util::describe_command_line(app);
  for (const auto& entry : commands) {
    if (is_public(entry)) spec.words.emplace_back(entry.name);
  }
  return spec;
}

}  // namespace dlaunch::cli
