// The values dlaunch submit writes into a job script are printable text on
// one line, or refused with a message that shows where the character is.
#include "submit/script_value.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "util/error.h"
#include "../test_support/input_error.h"

namespace dlaunch::submit {
namespace {

using test_support::input_error_of;

TEST(ScriptValue, OnlyTheSettingsWrittenIntoTheScriptAreChecked) {
  for (const char* name : {"job-name", "partition", "account", "qos", "time", "constraint", "mem",
                           "sbatch-arg", "output-dir", "signal"})
    EXPECT_TRUE(reaches_script_text(name)) << name;
  for (const char* name : {"run-arg", "prefix", "python", "nodes", "tee", "job_name", ""})
    EXPECT_FALSE(reaches_script_text(name)) << name;
  EXPECT_EQ(input_error_of([] { check_script_setting("prefix", std::string("[{rank}]\t\n"), "--prefix"); }),
            "no error");
  EXPECT_EQ(input_error_of([] { check_script_setting("run-arg", std::vector<std::string>{"a\nb", ""}, "--run-arg"); }),
            "no error");
}

TEST(ScriptValue, AControlCharacterIsNamedWithItsPlaceAndTheValueEscaped) {
  EXPECT_EQ(input_error_of([] { check_script_text("job-name", "ab\ncd", "--job-name"); }),
            "job-name (from --job-name) contains a newline (\\n) at character 3: 'ab\\ncd'. Every "
            "value that goes into the job script must be printable text on one line: a control "
            "character would end its #SBATCH line and run the rest as a shell command. Remove it "
            "from --job-name and submit again");
  EXPECT_NE(input_error_of([] { check_script_text("x", "a\rb", "s"); }).find("a carriage return (\\r) at character 2: 'a\\rb'"),
            std::string::npos);
  EXPECT_NE(input_error_of([] { check_script_text("x", "\tb", "s"); }).find("a tab (\\t) at character 1: '\\tb'"),
            std::string::npos);
  EXPECT_NE(input_error_of([] { check_script_text("x", std::string("a\0b", 3), "s"); })
                .find("a NUL byte (\\0) at character 2: 'a\\x00b'"),
            std::string::npos);
  EXPECT_NE(input_error_of([] { check_script_text("x", "a\x1b[31m", "s"); })
                .find("the control character \\x1b at character 2: 'a\\x1b[31m'"),
            std::string::npos);
  EXPECT_NE(input_error_of([] { check_script_text("x", "del\x7f", "s"); }).find("the control character \\x7f at character 4"),
            std::string::npos);
}

TEST(ScriptValue, TheRemedyCanBeGiven) {
  std::string message = input_error_of([] { check_script_text("the folder", "a\nb", "cwd", "Run it elsewhere"); });
  EXPECT_NE(message.find("the folder (from cwd) contains a newline"), std::string::npos) << message;
  EXPECT_EQ(message.substr(message.size() - 16), "Run it elsewhere") << message;
  EXPECT_EQ(message.find("Remove it"), std::string::npos) << message;
}

TEST(ScriptValue, PrintableTextPassesUnicodeToo) {
  EXPECT_EQ(input_error_of([] { check_script_text("job-name", "caf\xc3\xa9 run #1 'x' \"y\" $z", "--job-name"); }),
            "no error");
  EXPECT_EQ(input_error_of([] { check_script_setting("nodes", std::int64_t{3}, "--nodes"); }), "no error");
}

TEST(ScriptValue, EachListItemIsCheckedAndNoneMayBeEmpty) {
  EXPECT_NE(input_error_of([] { check_script_setting("sbatch-arg", std::vector<std::string>{"--a", "--b\n"}, "--sbatch-arg"); })
                .find("sbatch-arg (from --sbatch-arg) contains a newline (\\n) at character 4"),
            std::string::npos);
  EXPECT_NE(input_error_of([] { check_script_setting("sbatch-arg", std::vector<std::string>{"--a", ""}, "dlaunch.toml:3 [defaults]"); })
                .find("sbatch-arg (from dlaunch.toml:3 [defaults]) holds an empty value; sbatch would read it "
                      "as the end of its #SBATCH line"),
            std::string::npos);
  EXPECT_NE(input_error_of([] { check_script_setting("signal", std::string("USR1\n"), "--signal"); })
                .find("signal (from --signal) contains a newline"),
            std::string::npos);
}

}  // namespace
}  // namespace dlaunch::submit
