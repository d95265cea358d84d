// The shape every subcommand shares, so dlaunch_main can dispatch from a table.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "util/command_line_spec.h"

namespace dlaunch::cli {

// The arguments after the subcommand's name ("dlaunch run -n 2 x" gives
// {"-n", "2", "x"}). A command returns its exit code and throws
// InputError / SystemError (util/error.h) to stop the run.
using CommandArgs = std::vector<std::string>;
using CommandFunction = int (*)(const CommandArgs& args);

// What the command's command line accepts, taken from its parser
// (util/command_line_spec.h), so `dlaunch completion` knows its options.
using CommandLineFunction = util::CommandLineSpec (*)();

// A row of dlaunch_main's command table. A command with options gives
// COMMAND_LINE (e.g. `{"jobs", "...", jobs_command, jobs_command_line}`
// with jobs_command_line() returning util::describe_command_line(app) of
// the CLI::App jobs_command parses with); without it `dlaunch completion`
// completes the command's name only.
struct Command {
  const char* name;
  const char* summary;
  CommandFunction function;
  CommandLineFunction command_line = nullptr;
};

// The command of COMMANDS named NAME; a UsageError naming the nearest one
// ("Did you mean 'submit'?") when there is none.
const Command& find_command(std::span<const Command> commands, std::string_view name);

// Whether COMMAND is one a user types (not an internal helper, "__...").
bool is_public(const Command& command);

}  // namespace dlaunch::cli
