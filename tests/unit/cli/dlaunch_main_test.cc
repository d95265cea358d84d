// The whole program behind main(): the command table, and the one
// top-level catch that turns each kind of error into its line and exit code.
#include "cli/dlaunch_main.h"

#include <gtest/gtest.h>
#include <csignal>

#include <cerrno>
#include <functional>
#include <string>
#include <system_error>
#include <vector>

#include "../test_support/text.h"
#include "util/error.h"
#include "util/subprocess.h"

namespace dlaunch::cli {
namespace {

using test_support::contains;

struct Result {
  int code;
  std::string output;  // stdout and stderr: the console sinks may be one
};

Result guarded(const std::function<int()>& body) {
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  int code = run_guarded(body);
  std::string out = ::testing::internal::GetCapturedStdout();
  return {code, out + ::testing::internal::GetCapturedStderr()};
}

Result run(std::vector<std::string> args) {
  args.insert(args.begin(), "dlaunch");
  std::vector<char*> argv;
  for (auto& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  return guarded([&] { return dlaunch_main(static_cast<int>(args.size()), argv.data()); });
}

TEST(DlaunchMain, EachKindOfErrorHasItsLineAndExitCode) {
  Result input = guarded([]() -> int { throw util::InputError("--nnodes must be positive"); });
  EXPECT_EQ(input.code, 2);
  EXPECT_TRUE(contains(input.output, "dlaunch: error: --nnodes must be positive\n"));
  EXPECT_EQ(guarded([]() -> int { throw util::UsageError("bad flag"); }).code, 2);

  Result system = guarded([]() -> int { throw util::SystemError("node 1 is gone"); });
  EXPECT_EQ(system.code, 1);
  EXPECT_TRUE(contains(system.output, "dlaunch: error: node 1 is gone\n"));
  EXPECT_EQ(guarded([]() -> int { throw util::ProtocolError("garbage"); }).code, 1);

  Result os = guarded([]() -> int { throw std::system_error(ENOSPC, std::generic_category(), "write"); });
  EXPECT_EQ(os.code, 1);
  EXPECT_TRUE(contains(os.output, "dlaunch: error: write"));

  Result bug = guarded([]() -> int { throw std::logic_error("oops"); });
  EXPECT_EQ(bug.code, 1);
  EXPECT_TRUE(contains(bug.output, "dlaunch: internal error: oops\n"));
}

TEST(DlaunchMain, AStopSignalExitsWith128PlusItsNumber) {
  Result stopped = guarded([]() -> int { throw util::Interrupted(SIGTERM); });
  EXPECT_EQ(stopped.code, 128 + SIGTERM);
  EXPECT_TRUE(contains(stopped.output, "dlaunch: stopped by SIGTERM\n"));
}

TEST(DlaunchMain, ABodysOwnCodeIsPassedOn) {
  Result worker = guarded([] { return 7; });
  EXPECT_EQ(worker.code, 7);
  EXPECT_EQ(worker.output, "");
}

TEST(DlaunchMain, WithHelpItListsTheCommands) {
  for (const auto& args : {std::vector<std::string>{"--help"}, std::vector<std::string>{"help"}}) {
    Result help = run(args);
    EXPECT_EQ(help.code, 0);
    for (const char* command : {"run", "submit", "ssh", "exec", "check", "env", "hostlist", "version"})
      EXPECT_TRUE(contains(help.output, std::string("\n  ") + command + " ")) << command;
  }
}

// No command at all is a mistake (an empty variable in a script): the
// short usage goes to stderr and the exit code is the usage error's.
TEST(DlaunchMain, WithoutACommandItShowsTheShortUsageAndExits2) {
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  std::string name = "dlaunch";
  char* argv[] = {name.data(), nullptr};
  int code = dlaunch_main(1, argv);
  std::string out = ::testing::internal::GetCapturedStdout();
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(code, 2);
  EXPECT_EQ(out, "");
  EXPECT_TRUE(contains(err, "Usage: dlaunch COMMAND [options] [ARGS...]\n"));
  EXPECT_TRUE(contains(err, "Commands: run, submit, ssh, exec,"));
  EXPECT_TRUE(contains(err, "'dlaunch help'"));
  EXPECT_FALSE(contains(err, "__run-step"));
}

// A first word that is not a command gets the line that was meant.
TEST(DlaunchMain, AProgramOrARunOptionFirstSuggestsDlaunchRun) {
  Result program = run({"train.py"});
  EXPECT_EQ(program.code, 2);
  EXPECT_TRUE(contains(program.output, "dlaunch: error: 'train.py' is not a command. Did you mean "
                                       "'dlaunch run train.py'?"));
  Result option = run({"--nproc-per-node", "4", "train.py", "--lr", "0.1"});
  EXPECT_EQ(option.code, 2);
  EXPECT_TRUE(contains(option.output, "'--nproc-per-node' is an option of dlaunch run, not a command. Did "
                                      "you mean 'dlaunch run --nproc-per-node 4 train.py --lr 0.1'?"));
  EXPECT_TRUE(contains(run({"./bench", "x y"}).output, "Did you mean 'dlaunch run ./bench 'x y''?"));
  EXPECT_TRUE(contains(run({"-m", "pkg.train"}).output, "Did you mean 'dlaunch run -m pkg.train'?"));
}

TEST(DlaunchMain, AMisspeltVersionOrHelpGetsTheRightSpelling) {
  for (const char* spelling : {"-V", "-v", "--versoin", "--verison", "-version"}) {
    Result typo = run({spelling});
    EXPECT_EQ(typo.code, 2) << spelling;
    EXPECT_TRUE(contains(typo.output, std::string("unknown option '") + spelling +
                                          "' for dlaunch. Did you mean '--version'?"))
        << spelling;
  }
  EXPECT_TRUE(contains(run({"--hlep"}).output, "Did you mean '--help'?"));
  Result other = run({"--zzzzzz"});
  EXPECT_EQ(other.code, 2);
  EXPECT_FALSE(contains(other.output, "Did you mean"));
  EXPECT_TRUE(contains(other.output, "The first word is a command, --help or --version"));
}

TEST(DlaunchMain, VersionInBothSpellings) {
  for (const char* spelling : {"--version", "version"}) {
    Result version = run({spelling});
    EXPECT_EQ(version.code, 0);
    EXPECT_EQ(version.output, std::string("dlaunch ") + DLAUNCH_VERSION + "\n");
  }
}

TEST(DlaunchMain, AnUnknownCommandIsAUsageErrorWithAGuess) {
  Result typo = run({"sumbit", "train.py"});
  EXPECT_EQ(typo.code, 2);
  EXPECT_TRUE(contains(typo.output, "dlaunch: error: unknown command 'sumbit'. Did you mean 'submit'? "
                                    "Run 'dlaunch help' for the list."));
  EXPECT_FALSE(contains(run({"zzzzzzzz"}).output, "Did you mean"));
}

TEST(DlaunchMain, TheCommandGetsTheArgumentsAfterItsName) {
  Result count = run({"hostlist", "count", "n[1-4],m1"});
  EXPECT_EQ(count.code, 0);
  EXPECT_EQ(count.output, "5\n");
}

TEST(DlaunchMain, HelpWithACommandIsThatCommandsHelp) {
  Result help = run({"help", "hostlist"});
  EXPECT_EQ(help.code, 0);
  EXPECT_EQ(help.output, run({"hostlist", "--help"}).output);
  EXPECT_TRUE(contains(help.output, "Usage: dlaunch hostlist"));
  Result typo = run({"help", "sumbit"});
  EXPECT_EQ(typo.code, 2);
  EXPECT_TRUE(contains(typo.output, "Did you mean 'submit'?"));
  // The internal helper of a stack capture is not listed.
  EXPECT_FALSE(contains(run({"help"}).output, "__dump-python"));
}

TEST(DlaunchMain, ExecHasItsOwnHelpAndErrors) {
  Result help = run({"exec", "--help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_TRUE(contains(help.output, "Usage: dlaunch exec"));
  EXPECT_TRUE(contains(help.output, "Inside an srun task"));
  EXPECT_FALSE(contains(help.output, "Start and supervise"));
  Result typo = run({"exec", "--nproc-per-nod", "2", "x"});
  EXPECT_EQ(typo.code, 2);
  EXPECT_TRUE(contains(typo.output, "unknown option '--nproc-per-nod' for dlaunch exec"));
  EXPECT_TRUE(contains(typo.output, "'dlaunch exec --help' lists the options"));
}

// Every valued option of every command, as the command's own parser
// describes it (so a new option is covered without a line here), refuses
// the next option as its value: `--partition --help` must not print the
// help, `--log-dir --help` must not run --help. The built binary runs each,
// since dlaunch check execs dlaunch-check, which parses its own options.
TEST(DlaunchMain, EveryValuedOptionOfEveryCommandRefusesTheNextOptionAsItsValue) {
  int checked = 0;
  for (const Command& command : command_table()) {
    if (!is_public(command) || command.command_line == nullptr) continue;
    for (const util::OptionSpec& option : command.command_line().options) {
      if (!option.takes_value) continue;
      for (const std::string& name : option.names) {
        util::CapturedRun refused = util::run_captured({DLAUNCH_BINARY, command.name, name, "--help", "train.py"});
        std::string line = std::string("dlaunch ") + command.name + " " + name + " --help train.py";
        EXPECT_EQ(refused.exit_code, 2) << line << "\n" << refused.out << refused.err;
        EXPECT_TRUE(contains(refused.err, name + " needs a value")) << line;
        EXPECT_TRUE(contains(refused.err, "got the option --help")) << line;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 100);  // the table was walked, not skipped
}

}  // namespace
}  // namespace dlaunch::cli
