// dlaunch.toml: merging layers, and errors with file, line and key.
#include "submit/config_file.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

#include "flag_settings.h"
#include "submit/job_script.h"
#include "util/error.h"
#include "../test_support/input_error.h"

namespace dlaunch::submit {
namespace {

using test_support::error_of;
using test_support::request_for;

class ConfigFileTest : public ::testing::Test {
 protected:
  std::string write(const std::string& text) {
    std::ofstream(path_) << text;
    return path_;
  }
  std::string error_of(const std::string& text, std::optional<std::string> profile = std::nullopt) {
    SubmitSettings settings;
    return test_support::input_error_of([&] { apply_config_file(settings, write(text), profile); });
  }
  void TearDown() override { std::filesystem::remove(path_); }
  std::string path_ = ::testing::TempDir() + "dlaunch_config_test.toml";
};

constexpr const char* kConfig = R"(
[defaults]
partition = "debug"
gpus-per-node = 4
sbatch_args = ["--quotatype=reserved"]

[profiles.big]
nodes = 16
gpus-per-node = 8
exclusive = true

[profiles.small]
nodes = 1
)";

TEST_F(ConfigFileTest, DefaultsThenProfileOverBuiltIns) {
  SubmitSettings settings = default_submit_settings();
  apply_config_file(settings, write(kConfig), std::string("big"));
  EXPECT_EQ(settings.integer("nodes"), 16);
  EXPECT_EQ(settings.integer("gpus-per-node"), 8);
  EXPECT_EQ(settings.string("partition"), "debug");
  EXPECT_TRUE(settings.flag("exclusive"));
  EXPECT_EQ(settings.list("sbatch-arg"), (std::vector<std::string>{"--quotatype=reserved"}));
  EXPECT_EQ(settings.find("nodes")->source, path_ + ":8 [profiles.big]");
  EXPECT_EQ(settings.find("partition")->source, path_ + ":3 [defaults]");
  EXPECT_EQ(settings.find("output-dir")->source, "built-in default");
}

TEST_F(ConfigFileTest, WithoutProfileOnlyDefaultsApply) {
  SubmitSettings settings = default_submit_settings();
  apply_config_file(settings, write(kConfig), std::nullopt);
  EXPECT_EQ(settings.integer("nodes"), 1);
  EXPECT_EQ(settings.integer("gpus-per-node"), 4);
}

TEST_F(ConfigFileTest, UnknownKeyNamesFileLineAndSuggestion) {
  std::string message = error_of("[defaults]\nnodes = 2\ngpu-per-node = 4\n");
  EXPECT_NE(message.find(path_ + ":3"), std::string::npos) << message;
  EXPECT_NE(message.find("'gpu-per-node'"), std::string::npos) << message;
  EXPECT_NE(message.find("did you mean 'gpus-per-node'"), std::string::npos) << message;
}

TEST_F(ConfigFileTest, UnknownKeyInAnUnusedProfileIsStillAnError) {
  std::string message = error_of("[profiles.other]\nnodez = 2\n");
  EXPECT_NE(message.find("[profiles.other]"), std::string::npos) << message;
}

TEST_F(ConfigFileTest, WrongTypesAreNamed) {
  EXPECT_NE(error_of("[defaults]\nnodes = \"two\"\n").find("'nodes' must be an integer, got a string"),
            std::string::npos);
  EXPECT_NE(error_of("[defaults]\nexclusive = 1\n").find("true or false"), std::string::npos);
  EXPECT_NE(error_of("[defaults]\nsbatch-args = [1, 2]\n").find("a list of strings"),
            std::string::npos);
  EXPECT_NE(error_of("[defaults]\nnodes = -3\n").find("'nodes' must be an integer from 1 to 16384, got -3"),
            std::string::npos);
}

// Found by fuzz/config_file_fuzz: a float too large for an integer was
// converted before its type was checked (undefined behaviour).
TEST_F(ConfigFileTest, FloatsAreWrongTypeEvenBeyondTheIntegerRange) {
  for (const char* value : {"2.0", "3.3e23", "-1e300", "inf", "nan"}) {
    std::string message = error_of(std::string("[defaults]\nnodes = ") + value + "\n");
    EXPECT_NE(message.find("'nodes' must be an integer, got a floating-point number"),
              std::string::npos)
        << value << ": " << message;
  }
}

TEST_F(ConfigFileTest, SyntaxErrorsGiveLineAndColumn) {
  std::string message = error_of("[defaults]\nnodes = = 2\n");
  EXPECT_NE(message.find(path_ + ":2:"), std::string::npos) << message;
  EXPECT_NE(message.find("not valid TOML"), std::string::npos) << message;
}

TEST_F(ConfigFileTest, MissingProfileListsTheKnownOnes) {
  std::string message = error_of(kConfig, std::string("huge"));
  EXPECT_NE(message.find("no profile 'huge'"), std::string::npos) << message;
  EXPECT_NE(message.find("big, small"), std::string::npos) << message;
}

TEST_F(ConfigFileTest, UnknownTopLevelKey) {
  EXPECT_NE(error_of("nodes = 2\n").find("unknown top-level key 'nodes'"), std::string::npos);
}

// A TOML string can hold any control character; one bound for the job script
// would inject a line into it (submit/script_value.h).
TEST_F(ConfigFileTest, ControlCharactersInScriptValuesAreRefusedWithFileAndLine) {
  std::string message = error_of("[defaults]\npartition = \"gpu\"\njob-name = \"evil\\ntouch /tmp/x\"\n");
  EXPECT_NE(message.find("job-name (from " + path_ + ":3 [defaults]) contains a newline"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("'evil\\ntouch /tmp/x'"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << "the message itself breaks the line";

  // In a list, in a profile not asked for, and for NUL, TAB and DEL alike.
  message = error_of("[profiles.other]\nsbatch-args = [\"--comment=a\", \"x\\u0000y\"]\n");
  EXPECT_NE(message.find("sbatch-arg (from " + path_ + ":2 [profiles.other]) contains a NUL byte"),
            std::string::npos)
      << message;
  EXPECT_NE(error_of("[defaults]\noutput-dir = \"a\\tb\"\n").find("output-dir (from " + path_ + ":2"),
            std::string::npos);
  EXPECT_NE(error_of("[defaults]\nsignal = \"USR1\\u007f\"\n").find("signal (from " + path_ + ":2"),
            std::string::npos);

  // Values that reach only the srun line are quoted there: any byte will do.
  EXPECT_EQ(error_of("[defaults]\nprefix = \"[{rank}]\\t\"\nrun-args = [\"--x=a\\nb\"]\n"), "no error");
}

// dlaunch submit's --signal and --requeue as dlaunch.toml keys.
class SubmitConfigFileTest : public ::testing::Test {
 protected:
  SubmitSettings read(const std::string& text, std::optional<std::string> profile = std::nullopt) {
    std::ofstream(path_) << text;
    SubmitSettings settings = default_submit_settings();
    apply_config_file(settings, path_, profile);
    return settings;
  }
  void TearDown() override { std::filesystem::remove(path_); }
  std::string path_ = ::testing::TempDir() + "dlaunch_submit_options_test.toml";
};

TEST_F(SubmitConfigFileTest, SignalAndRequeueKeys) {
  constexpr const char* kSignalConfig = R"([defaults]
signal = "USR2@300"
requeue = true

[profiles.quick]
signal = "USR1@30"
requeue = false

[profiles.wrong]
signal = "B:USR1@60"
)";
  SubmitSettings defaults = read(kSignalConfig);
  JobRequest request = request_for(defaults);
  ASSERT_TRUE(request.signal);
  EXPECT_EQ(request.signal->sbatch_value(), "USR2@300");
  EXPECT_TRUE(request.requeue);
  EXPECT_NE(defaults.find("signal")->source.find("[defaults]"), std::string::npos);

  SubmitSettings quick = read(kSignalConfig, "quick");
  request = request_for(quick);
  EXPECT_EQ(request.signal->sbatch_value(), "USR1@30");
  EXPECT_FALSE(request.requeue);

  // The refusal names the file, line and table the value came from.
  std::string message = error_of(read(kSignalConfig, "wrong"));
  EXPECT_NE(message.find(path_ + ":10 [profiles.wrong]"), std::string::npos) << message;
  EXPECT_NE(message.find("only the batch shell"), std::string::npos) << message;

  // Underscores work as for every key; wrong types are named.
  EXPECT_TRUE(read("[defaults]\nrequeue = true\nsignal = \"USR1\"\n").flag("requeue"));
  try {
    read("[defaults]\nrequeue = \"yes\"\n");
    FAIL() << "a string for requeue was accepted";
  } catch (const util::InputError& error) {
    EXPECT_NE(std::string(error.what()).find("'requeue' must be true or false"), std::string::npos)
        << error.what();
  }
  try {
    read("[defaults]\nsignal = 10\n");
    FAIL() << "an integer for signal was accepted";
  } catch (const util::InputError& error) {
    EXPECT_NE(std::string(error.what()).find("'signal' must be a string"), std::string::npos)
        << error.what();
  }
}

}  // namespace
// How soon a silent node counts as lost, from dlaunch.toml, on every launcher.
TEST_F(SubmitConfigFileTest, HeartbeatTimeoutKey) {
  SubmitSettings settings = read("[defaults]\nheartbeat_timeout = 12\n");
  JobRequest request = request_for(settings);
  EXPECT_NE(util::shell_join(request.run_args).find("--heartbeat-timeout 12"), std::string::npos)
      << util::shell_join(request.run_args);
  std::string message = test_support::input_error_of([&] { read("[defaults]\nheartbeat-timeout = 0\n"); });
  EXPECT_NE(message.find("'heartbeat-timeout' must be an integer from 1 to 604800, got 0"), std::string::npos) << message;
  EXPECT_NE(message.find(path_ + ":2: "), std::string::npos) << message;
}

}  // namespace dlaunch::submit

namespace dlaunch::submit {
// The site's health check from dlaunch.toml reaches every launcher's dlaunch run.
TEST_F(SubmitConfigFileTest, HealthCheckKeys) {
  SubmitSettings settings =
      read("[defaults]\nhealth-check = \"/opt/site/prolog --quick\"\nhealth_check_timeout = 30\n");
  JobRequest request = request_for(settings);
  std::string args = util::shell_join(request.run_args);
  EXPECT_NE(args.find("'--health-check=/opt/site/prolog --quick'"), std::string::npos) << args;
  EXPECT_NE(args.find("--health-check-timeout 30"), std::string::npos) << args;
}

}  // namespace dlaunch::submit
