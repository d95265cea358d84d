#include "cli/command.h"

#include <fmt/format.h>

#include "util/error.h"
#include "util/strings.h"

namespace dlaunch::cli {

const Command& find_command(std::span<const Command> commands, std::string_view name) {
  std::vector<std::string> names;
  for (const auto& command : commands) {
    if (name == command.name) return command;
    if (is_public(command)) names.emplace_back(command.name);
  }
  std::string hint;
  if (auto close = util::closest_match(name, names)) hint = fmt::format(" Did you mean '{}'?", *close);
  throw util::UsageError(fmt::format("unknown command '{}'.{} Run 'dlaunch help' for the list.", name, hint));
}

bool is_public(const Command& command) { return !std::string_view(command.name).starts_with("__"); }

}  // namespace dlaunch::cli
