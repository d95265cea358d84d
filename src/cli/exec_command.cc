#include "cli/exec_command.h"

#include <fmt/format.h>
#include <unistd.h>

#include "launch/run_options.h"
#include "launch/launch_config.h"
#include "launch/task_environment.h"
#include "process/worker_process.h"
#include "util/error.h"

namespace dlaunch::cli {

int exec_command(const CommandArgs& args) {
  util::Environment environment = util::Environment::from_process();
  auto options = launch::parse_run_options(args, environment, /*require_program=*/true, launch::kExecCommand);
  if (!options) return 0;
  std::vector<std::string> argv = launch::worker_command(*options, environment);
  launch::add_task_environment(environment);
  auto path = process::find_executable(argv.front(), environment);
  if (!path)
    throw util::InputError(
        fmt::format("cannot run '{}': not an executable file or not in PATH", argv.front()));
  std::vector<std::string> entries = environment.to_entries();
  std::vector<char*> c_args, c_env;
  for (auto& arg : argv) c_args.push_back(arg.data());
  c_args.push_back(nullptr);
  for (auto& entry : entries) c_env.push_back(entry.data());
  c_env.push_back(nullptr);
  ::execve(path->c_str(), c_args.data(), c_env.data());
  throw util::system_error(fmt::format("cannot execute '{}'", *path), errno);
}

}  // namespace dlaunch::cli
