// Running a CLI11 parser the same way for every subcommand.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

namespace dlaunch::util {

// Parses ARGS with APP. Returns false when --help was asked for (the help
// is printed); throws UsageError naming COMMAND ("dlaunch run") and CLI11's
// complaint for anything malformed.
bool parse_command_line(CLI::App& app, const std::vector<std::string>& args,
                        const std::string& command);

// For parsers with prefix_command(): the PROGRAM [ARGS...] CLI11 left over,
// without a leading "--". A leftover starting with '-' that did not follow
// "--" is an unknown option: nullopt, so the caller can name it.
std::optional<std::vector<std::string>> program_after_options(const CLI::App& app);

}  // namespace dlaunch::util
