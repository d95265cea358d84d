#include "util/command_line.h"

#include <fmt/format.h>

#include "util/error.h"

namespace dlaunch::util {

bool parse_command_line(CLI::App& app, const std::vector<std::string>& args,
                        const std::string& command) {
  // CLI11 consumes a vector of arguments from its back.
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    fmt::print("{}", app.help());
    return false;
  } catch (const CLI::ParseError& error) {
    throw UsageError(
        fmt::format("{}: {}. '{} --help' lists the options.", command, error.what(), command));
  }
  return true;
}

std::optional<std::vector<std::string>> program_after_options(const CLI::App& app) {
  std::vector<std::string> program = app.remaining();
  if (!program.empty() && program.front() == "--") {
    program.erase(program.begin());
    return program;
  }
  if (!program.empty() && program.front().starts_with("-")) return std::nullopt;
  return program;
}

}  // namespace dlaunch::util
