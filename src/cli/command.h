// The shape every subcommand shares, so dlaunch_main can dispatch from a table.
#pragma once

#include <string>
#include <vector>

namespace dlaunch::cli {

// The arguments after the subcommand's name ("dlaunch run -n 2 x" gives
// {"-n", "2", "x"}). A command returns its exit code and throws
// InputError / SystemError (util/error.h) to stop the run.
using CommandArgs = std::vector<std::string>;
using CommandFunction = int (*)(const CommandArgs& args);

struct Command {
  const char* name;
  const char* summary;
  CommandFunction function;
};

}  // namespace dlaunch::cli
