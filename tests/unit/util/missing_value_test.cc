// The check that an option's value was not left out: the next option is
// refused as a value, what is a value stays one, and nothing after the
// options is looked at.
#include "util/missing_value.h"

#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "../test_support/text.h"
#include "util/command_line.h"
#include "util/error.h"

namespace dlaunch::util {
namespace {

using test_support::contains;

// A parser like dlaunch run's or submit's: options, then PROGRAM [ARGS...].
struct ProgramParser {
  CLI::App app{"test", "dlaunch test"};
  std::string partition, log_dir, passed_on;
  int nodes = 0;
  bool dry_run = false, module = false;
  ProgramParser() {
    app.prefix_command();
    app.add_option("-p,--partition", partition, "a partition")->group("Slurm")->type_name("NAME");
    app.add_option("-N,--nodes", nodes, "how many")->group("Slurm")->type_name("N");
    app.add_option("--log-dir,--log_dir", log_dir, "where")->group("Output")->type_name("DIR");
    app.add_option("--pass-arg", passed_on, "for another program")->group("Slurm")->type_name("ARG");
    app.add_flag("--dry-run", dry_run, "print only")->group("Slurm");
    app.add_flag("-m,--module", module, "a module")->group("Slurm");
    finish_help(app, {});
  }
};

// The UsageError refuse_missing_values throws for ARGS, or "<accepted>".
std::string refusal(const std::vector<std::string>& args) {
  ProgramParser parser;
  try {
    refuse_missing_values(parser.app, args, "dlaunch test");
  } catch (const UsageError& error) {
    return error.what();
  }
  return "<accepted>";
}

TEST(MissingValue, TheNextLongOptionIsRefusedNamingBothAndTheWayOut) {
  EXPECT_EQ(refusal({"--partition", "--dry-run", "--", "train.py"}),
            "dlaunch test: --partition needs a value (NAME), got the option --dry-run; give the value "
            "(--partition NAME), or write --partition=--dry-run if you mean that text.");
  // An option the command does not know is refused alike: it is no value either.
  EXPECT_TRUE(contains(refusal({"--log-dir", "--no-such-option", "x"}), "--log-dir needs a value (DIR)"));
  // The underscore spelling and short names, as typed; '=' takes the long name.
  EXPECT_TRUE(contains(refusal({"--log_dir", "--nodes", "2", "x"}), "--log_dir needs a value"));
  EXPECT_TRUE(contains(refusal({"-p", "--dry-run", "x"}),
                       "-p needs a value (NAME), got the option --dry-run; give the value (-p NAME), or "
                       "write --partition=--dry-run"));
  // -N2 holds its value; -mp takes the next word for -p.
  EXPECT_TRUE(contains(refusal({"-mp", "--dry-run", "x"}), "-p needs a value"));
  EXPECT_EQ(refusal({"-N2", "--dry-run", "x"}), "<accepted>");
}

TEST(MissingValue, TheDoubleDashIsNoValue) {
  EXPECT_EQ(refusal({"--log-dir", "--", "train.py"}),
            "dlaunch test: --log-dir needs a value (DIR), got '--', which ends the options; give the value "
            "before it (--log-dir DIR).");
}

TEST(MissingValue, AShortOptionOfTheCommandIsNoValueUnlessPassedOn) {
  EXPECT_TRUE(contains(refusal({"--log-dir", "-m", "pkg"}), "--log-dir needs a value (DIR), got the option -m"));
  EXPECT_TRUE(contains(refusal({"-p", "-N", "2", "x"}), "-p needs a value (NAME), got the option -N"));
  // A word for another program may be one of its short options (ssh -F).
  EXPECT_EQ(refusal({"--pass-arg", "-m", "x"}), "<accepted>");
  EXPECT_EQ(refusal({"--pass-arg", "-F", "x"}), "<accepted>");
  // ... but a long one must be given with '='.
  EXPECT_TRUE(contains(refusal({"--pass-arg", "--exclusive", "x"}), "write --pass-arg=--exclusive"));
  EXPECT_EQ(refusal({"--pass-arg=--exclusive", "x"}), "<accepted>");
}

TEST(MissingValue, ValuesThatLookLikeOptionsButAreNotStayValues) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"--partition=--dry-run", "x"},  // the way to mean it
           {"--nodes", "-1", "x"},          // a number: the range check answers
           {"-N", "-1", "x"},
           {"--log-dir", "-", "x"},         // a dash alone
           {"--log-dir", "-x", "x"},        // not a short option of the command
           {"--partition", "gpu", "--dry-run", "x"},
       })
    EXPECT_EQ(refusal(args), "<accepted>") << args[0] << " " << args[1];
}

// An empty word is no value either: CLI11 would take the word after
// "--partition=" as its value. Where empty means "none" it stays a value.
TEST(MissingValue, AnEmptyWordOrAnOptionAtTheEndIsNoValue) {
  EXPECT_EQ(refusal({"--partition", "", "x"}),
            "dlaunch test: --partition needs a value (NAME), got an empty word (a variable that is unset or "
            "empty?); give the value (--partition NAME), or leave --partition out.");
  EXPECT_TRUE(contains(refusal({"--partition=", "--dry-run", "x"}), "--partition needs a value (NAME), got an empty"));
  EXPECT_TRUE(contains(refusal({"-p", "", "x"}), "-p needs a value (NAME), got an empty word"));
  EXPECT_EQ(refusal({"--dry-run", "--log-dir"}),
            "dlaunch test: --log-dir needs a value (DIR), and nothing follows it; give the value (--log-dir DIR).");
  CLI::App app{"test", "dlaunch test"};
  std::string prefix;
  app.add_option("--prefix", prefix, "a prefix")->type_name("TEMPLATE");
  EXPECT_NO_THROW(refuse_missing_values(app, {"--prefix", ""}, "dlaunch test"));
  EXPECT_NO_THROW(refuse_missing_values(app, {"--prefix="}, "dlaunch test"));
}

TEST(MissingValue, NothingAfterTheOptionsIsLookedAt) {
  // PROGRAM's own words, whatever they are.
  EXPECT_EQ(refusal({"w.sh", "--log-dir", "--x"}), "<accepted>");
  EXPECT_EQ(refusal({"--dry-run", "-m", "pkg.train", "--partition", "--lr"}), "<accepted>");
  EXPECT_EQ(refusal({"--nodes", "2", "--", "--log-dir", "--x"}), "<accepted>");
  // An unknown option is left to the parser, which names the nearest one.
  EXPECT_EQ(refusal({"--partiton", "--log-dir", "--x"}), "<accepted>");
}

TEST(MissingValue, WithoutAProgramEveryWordIsLookedAt) {
  CLI::App app{"test", "dlaunch test"};
  std::string job, rank;
  app.add_option("job", job, "the job")->type_name("JOB");
  app.add_option("--rank", rank, "ranks")->group("Which")->type_name("LIST");
  EXPECT_THROW(refuse_missing_values(app, {"12", "--rank", "--json"}, "dlaunch test"), UsageError);
  EXPECT_NO_THROW(refuse_missing_values(app, {"12", "--rank", "3"}, "dlaunch test"));
}

// parse_command_line checks first: the value CLI11 would have taken never
// reaches the command.
TEST(MissingValue, ParseCommandLineRefusesBeforeParsing) {
  ProgramParser parser;
  EXPECT_THROW(parse_command_line(parser.app, {"--partition", "--dry-run", "train.py"}, "dlaunch test"),
               UsageError);
  EXPECT_FALSE(parser.dry_run);
  ProgramParser fine;
  ASSERT_TRUE(parse_command_line(fine.app, {"--partition=--dry-run", "train.py"}, "dlaunch test"));
  EXPECT_EQ(fine.partition, "--dry-run");
  EXPECT_FALSE(fine.dry_run);
}

}  // namespace
}  // namespace dlaunch::util
