#include "cli/dlaunch_main.h"

#include <fmt/format.h>
#include <string_view>
#include <system_error>

#include "cli/cancel_command.h"
#include "cli/check_command.h"
#include "cli/command.h"
#include "cli/completion_command.h"
#include "cli/env_command.h"
#include "cli/exec_command.h"
#include "cli/first_word.h"
#include "cli/dump_python_command.h"
#include "cli/help_command.h"
#include "cli/hostlist_command.h"
#include "cli/jobs_command.h"
#include "cli/logs_command.h"
#include "cli/stacks_command.h"
#include "cli/run_command.h"
#include "cli/run_step_command.h"
#include "cli/ssh_command.h"
#include "cli/status_command.h"
#include "cli/submit_command.h"
#include "cli/version_command.h"
#include "check/check_options.h"
#include "launch/run_options.h"
#include "process/console_report.h"
#include "ssh/ssh_options.h"
#include "submit/submit_options.h"
#include "util/console.h"
#include "util/error.h"
#include "util/exit_codes.h"
#include "util/signal_names.h"
#include "util/strings.h"

namespace dlaunch::cli {
namespace {

// Commands that are handed the table itself.
int help(const CommandArgs& args);
util::CommandLineSpec help_line();
int completion(const CommandArgs& args);

constexpr Command kCommands[] = {
    {"run", "start and supervise this node's workers (torchrun-compatible)", run_command,
     launch::describe_run_options},
    {"submit", "submit a job to Slurm with sbatch, or run it now with srun", submit_command,
     submit::describe_submit_options},
    {"ssh", "run a job on hosts over ssh: dlaunch run on every host, one output", ssh_command,
     ssh::describe_ssh_options},
    {"exec", "inside an srun task: set torchrun's variables from Slurm's and run PROGRAM",
     exec_command, launch::describe_exec_options},
    {"check", "prove the fabric: all-reduce check, bandwidth sweep, node-pair bandwidth",
     check_command, check::describe_check_options},
    {"env", "show the topology 'dlaunch run' would use here, and where each value came from",
     env_command, env_command_line},
    {"jobs", "list the jobs submitted from here, newest first, with their states", jobs_command,
     jobs_command_line},
    {"status", "show a submitted job: state, reason, times, nodes, restarts, failure", status_command,
     status_command_line},
    {"logs", "show a submitted job's worker output, merged in time order, or follow it", logs_command,
     logs_command_line},
    {"cancel", "cancel a submitted job (after a checkpoint signal if asked) and wait until it is gone",
     cancel_command, cancel_command_line},
    {"stacks", "show where every rank of a running job is: its stacks, grouped, outliers first",
     stacks_command, stacks_command_line},
    {"hostlist", "expand, compress, count Slurm hostlists exactly as Slurm does", hostlist_command,
     hostlist_command_line},
    {"completion", "print a bash, zsh or fish completion script for dlaunch", completion,
     completion_command_line},
    {"version", "print the version", version_command, version_command_line},
    {"help", "show this help, or a command's", help, help_line},
    // Internal (not in the help): a stack capture's helper.
    {"__dump-python", "", dump_python_command},
    // Internal: the step of a job script, ended by the job's verdict.
    {"__run-step", "", run_step_command},
};

int help(const CommandArgs& args) { return help_command(args, kCommands); }

util::CommandLineSpec help_line() { return help_command_line(kCommands); }

int completion(const CommandArgs& args) { return completion_command(args, kCommands); }

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
    return report("error", error, util::kExitUsage);
  } catch (const util::SystemError& error) {  // and ProtocolError, a peer's fault
    return report("error", error, util::kExitFailure);
  } catch (const util::Interrupted& interrupted) {
    util::console_err().write_message(
        fmt::format("dlaunch: stopped by {}", util::signal_name(interrupted.signal)));
    return util::exit_code_of_signal(interrupted.signal);
  } catch (const std::system_error& error) {
    // The operating system refused (a file system error, a thread that
    // could not start): the outside world, not a bug.
    return report("error", error, util::kExitFailure);
  } catch (const std::exception& error) {
    return report("internal error", error, util::kExitFailure);
  }
}

}  // namespace

std::span<const Command> command_table() { return kCommands; }

int run_guarded(const std::function<int()>& body) {
  int code = run_catching(body);
  // Bounded: a stalled console gets kConsoleExitWait, then we exit anyway.
  process::finish_console_output();
  return code;
}

int dlaunch_main(int argc, char** argv) {
  return run_guarded([&] {
    if (argc < 2) {
      // No command is a mistake (a script's empty variable), not a request
      // for help: said on stderr, with the usage error's code.
      fmt::print(stderr, "{}", short_usage(kCommands));
      return util::kExitUsage;
    }
    std::string_view name = argv[1];
    if (name == "--help" || name == "-h") return help({});
    if (name == "--version") return version_command({});
    const Command& command = command_named_first(kCommands, CommandArgs(argv + 1, argv + argc));
    return command.function(CommandArgs(argv + 2, argv + argc));
  });
}

}  // namespace dlaunch::cli
