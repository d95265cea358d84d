// A subcommand's parser, built by one configure function for both of its
// uses: parsing the command's arguments, and describing its command line
// (cli/command.h's CommandLineFunction, for `dlaunch completion` and the
// man page), so the description never drifts from the parser.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>

#include "cli/command.h"
#include "util/command_line.h"
#include "util/command_line_spec.h"

namespace dlaunch::cli {

// ARGS parsed as "dlaunch NAME" (with DESCRIPTION) by the parser CONFIGURE
// fills: the values, or nullopt when --help was asked for (and printed).
// Throws UsageError as util::parse_command_line does.
template <typename Values>
std::optional<Values> parse_with(const CommandArgs& args, const char* description, const char* name,
                                 void (*configure)(CLI::App&, Values&)) {
  CLI::App app(description, name);
  Values values{};
  configure(app, values);
  if (!util::parse_command_line(app, args, name)) return std::nullopt;
  return values;
}

// The same for a command without options of its own: false when --help was
// asked for.
inline bool parse_with(const CommandArgs& args, const char* description, const char* name,
                       void (*configure)(CLI::App&)) {
  CLI::App app(description, name);
  configure(app);
  return util::parse_command_line(app, args, name);
}

// The command line of "dlaunch NAME" as CONFIGURE builds its parser.
template <typename Values>
util::CommandLineSpec command_line_of(const char* description, const char* name,
                                      void (*configure)(CLI::App&, Values&)) {
  CLI::App app(description, name);
  Values unread{};
  configure(app, unread);
  return util::describe_command_line(app);
}

inline util::CommandLineSpec command_line_of(const char* description, const char* name,
                                             void (*configure)(CLI::App&)) {
  CLI::App app(description, name);
  configure(app);
  return util::describe_command_line(app);
}

}  // namespace dlaunch::cli
