#include "cli/dlaunch_main.h"

#include <fmt/format.h>
#include <string_view>
#include <system_error>

#include "cli/check_command.h"
#include "cli/command.h"
#include "cli/env_command.h"
#include "cli/exec_command.h"
#include "cli/dump_python_command.h"
#include "cli/hostlist_command.h"
#include "cli/stacks_command.h"
#include "cli/run_command.h"
#include "cli/ssh_command.h"
#include "cli/submit_command.h"
#include "process/console_report.h"
#include "process/signal_channel.h"
#include "util/console.h"
#include "util/error.h"
#include "util/strings.h"

namespace dlaunch::cli {
namespace {

int version_command(const CommandArgs&) {
  fmt::print("dlaunch {}\n", DLAUNCH_VERSION);
  return 0;
}

int help_command(const CommandArgs&);

constexpr Command kCommands[] = {
    {"run", "start and supervise this node's workers (torchrun-compatible)", run_command},
    {"submit", "submit a job to Slurm with sbatch, or run it now with srun", submit_command},
    {"ssh", "run a job on hosts over ssh: dlaunch run on every host, one output", ssh_command},
    {"exec", "inside an srun task: set torchrun's variables from Slurm's and run PROGRAM",
     exec_command},
    {"check", "prove the fabric: all-reduce check, bandwidth sweep, node-pair bandwidth",
     check_command},
    {"env", "show the topology 'dlaunch run' would use here, and where each value came from",
     env_command},
    {"stacks", "show where every rank of a running job is: its stacks, grouped, outliers first",
     stacks_command},
    {"hostlist", "expand, compress, count Slurm hostlists exactly as Slurm does", hostlist_command},
    {"version", "print the version", version_command},
    {"help", "show this help", help_command},
    // Internal (not in the help): a stack capture's helper.
    {"__dump-python", "", dump_python_command},
};

const Command& find_command(std::string_view name);

// `dlaunch help CMD` is `dlaunch CMD --help`.
int help_command(const CommandArgs& args) {
  if (!args.empty()) return find_command(args.front()).function({"--help"});
  fmt::print("dlaunch: launch distributed training on Slurm and SSH clusters\n\n");
  fmt::print("usage: dlaunch COMMAND [options]\n\ncommands:\n");
  for (const auto& command : kCommands) {
    if (std::string_view(command.name).rfind("__", 0) != 0) fmt::print("  {:<10} {}\n", command.name, command.summary);
  }
  fmt::print("\n'dlaunch COMMAND --help' (or 'dlaunch help COMMAND') shows a command's options.\n");
  return 0;
}

const Command& find_command(std::string_view name) {
  std::vector<std::string> names;
  for (const auto& command : kCommands) {
    if (name == command.name) return command;
    names.emplace_back(command.name);
  }
  std::string hint;
  if (auto close = util::closest_match(name, names)) hint = fmt::format(" Did you mean '{}'?", *close);
  throw util::UsageError(fmt::format("unknown command '{}'.{} Run 'dlaunch help' for the list.", name, hint));
}

}  // namespace

namespace {

// The error line goes through the non-blocking console like everything
// else dlaunch run prints, so it waits in line behind what is already there.
int report(const char* kind, const std::exception& error, int code) {
  util::console_err().write_message(fmt::format("dlaunch: {}: {}", kind, error.what()));
  return code;
}

int run_catching(const std::function<int()>& body) {
  try {
    return body();
  } catch (const util::InputError& error) {
    return report("error", error, util::kExitInputError);
  } catch (const util::SystemError& error) {  // and ProtocolError, a peer's fault
    return report("error", error, util::kExitSystemError);
  } catch (const util::Interrupted& interrupted) {
    util::console_err().write_message(
        fmt::format("dlaunch: stopped by {}", process::signal_name(interrupted.signal)));
    return 128 + interrupted.signal;
  } catch (const std::system_error& error) {
    // The operating system refused (a file system error, a thread that
    // could not start): the outside world, not a bug.
    return report("error", error, util::kExitSystemError);
  } catch (const std::exception& error) {
    return report("internal error", error, util::kExitSystemError);
  }
}

}  // namespace

int run_guarded(const std::function<int()>& body) {
  int code = run_catching(body);
  // Bounded: a stalled console gets kConsoleExitWait, then we exit anyway.
  process::finish_console_output();
  return code;
}

int dlaunch_main(int argc, char** argv) {
  return run_guarded([&] {
    if (argc < 2) return help_command({});
    std::string_view name = argv[1];
    if (name == "--help" || name == "-h") return help_command({});
    if (name == "--version") return version_command({});
    const Command& command = find_command(name);
    return command.function(CommandArgs(argv + 2, argv + argc));
  });
}

}  // namespace dlaunch::cli
