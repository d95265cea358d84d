#include "cli/check_command.h"

#include <filesystem>
#include <fmt/format.h>

#include "util/error.h"
#include "util/own_executable.h"
#include "util/subprocess.h"

namespace dlaunch::cli {

int check_command(const CommandArgs& args) {
  auto check = std::filesystem::path(util::own_executable()).parent_path() / "dlaunch-check";
  if (!std::filesystem::exists(check))
    throw util::SystemError(fmt::format("{} is missing: it is built and installed beside dlaunch",
                                  check.string()));
  std::vector<std::string> argv{check.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  util::exec_replacing(argv);
}

}  // namespace dlaunch::cli
