#include "cli/version_command.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/command_parser.h"
#include "util/command_line.h"

namespace dlaunch::cli {
namespace {

constexpr const char* kVersionDescription = "Print dlaunch's version.";

// A parser although there are no options, so that --help and a typo
// answer as in every other command.
void configure_version(CLI::App& app) {
  util::set_usage(app, "dlaunch version");
  util::finish_help(app, {
                             {"dlaunch version", "prints e.g. 'dlaunch 0.1.0'"},
                             {"dlaunch --version", "the same"},
                             {"ssh node1 dlaunch version",
                              "the version on another host, where dlaunch ssh runs dlaunch from the same path"},
                         });
}

}  // namespace

int version_command(const CommandArgs& args) {
  if (!parse_with(args, kVersionDescription, "dlaunch version", configure_version)) return 0;
  fmt::print("dlaunch {}\n", DLAUNCH_VERSION);
  return 0;
}

util::CommandLineSpec version_command_line() { return command_line_of(kVersionDescription, "dlaunch version", configure_version); }

}  // namespace dlaunch::cli
