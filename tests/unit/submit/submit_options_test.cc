// dlaunch submit's --signal and --requeue: flags, dlaunch.toml keys, the
// forms sbatch takes, and the refusals with what to do instead.
#include "submit/submit_options.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

#include "submit/config_file.h"
#include "submit/job_script.h"
#include "util/error.h"

namespace dlaunch::submit {
namespace {

JobRequest request_for(const SubmitSettings& settings) {
  return make_job_request(settings, {"train.py"}, "/opt/dlaunch", "/out/x", "x");
}

SubmitSettings with(std::initializer_list<std::pair<const char*, Value>> values) {
  SubmitSettings settings = default_submit_settings();
  for (const auto& [name, value] : values) settings.set(name, value, std::string("--") + name);
  return settings;
}

// The message of the InputError that SETTINGS give, or "no error".
std::string error_of(const SubmitSettings& settings) {
  try {
    request_for(settings);
  } catch (const InputError& error) {
    return error.what();
  }
  return "no error";
}

std::string signal_error(const std::string& text) {
  return error_of(with({{"signal", text}}));
}

TEST(SubmitOptions, SignalAndRequeueFlags) {
  auto options = parse_submit_options({"--signal", "USR1@90", "--requeue", "train.py", "--lr", "1"});
  ASSERT_TRUE(options);
  EXPECT_EQ(options->flags.string("signal"), "USR1@90");
  EXPECT_EQ(options->flags.find("signal")->source, "--signal");
  EXPECT_TRUE(options->flags.flag("requeue"));
  EXPECT_EQ(options->flags.find("requeue")->source, "--requeue");
  EXPECT_EQ(options->command, (std::vector<std::string>{"train.py", "--lr", "1"}));

  options = parse_submit_options({"--signal=R:USR2@600", "train.py"});
  ASSERT_TRUE(options);
  EXPECT_EQ(options->flags.string("signal"), "R:USR2@600");
  EXPECT_FALSE(options->flags.flag("requeue"));
  EXPECT_EQ(options->flags.find("requeue"), nullptr);  // not given: the lower layers decide
}

TEST(SubmitOptions, SignalFormsSbatchTakes) {
  struct Case {
    const char* text;
    const char* sbatch;
    const char* name;
  };
  for (const Case& form : {Case{"USR1", "USR1@60", "USR1"}, Case{"usr1@0", "USR1@0", "USR1"},
                           Case{"SIGUSR1@120", "USR1@120", "USR1"}, Case{"10@5", "USR1@5", "USR1"},
                           Case{"USR2@65535", "USR2@65535", "USR2"}, Case{"sigusr2", "USR2@60", "USR2"},
                           Case{"12", "USR2@60", "USR2"}, Case{"R:USR1@300", "R:USR1@300", "USR1"},
                           Case{"r:12@7", "R:USR2@7", "USR2"}}) {
    PreemptSignal signal = parse_preempt_signal(form.text, "--signal");
    EXPECT_EQ(signal.sbatch_value(), form.sbatch) << form.text;
    EXPECT_EQ(signal.name, form.name) << form.text;
  }
}

TEST(SubmitOptions, SignalRefusalsSayWhyAndWhatToDo) {
  std::string batch = signal_error("B:USR1@60");
  EXPECT_NE(batch.find("signal 'B:USR1@60' (from --signal)"), std::string::npos) << batch;
  EXPECT_NE(batch.find("only the batch shell"), std::string::npos) << batch;
  EXPECT_NE(batch.find("Drop the 'B:'"), std::string::npos) << batch;
  EXPECT_NE(signal_error("RB:USR1").find("only the batch shell"), std::string::npos);
  EXPECT_NE(signal_error("b:usr2@5").find("only the batch shell"), std::string::npos);

  for (const char* stop : {"TERM@60", "SIGINT", "15", "HUP@10", "KILL"}) {
    std::string message = signal_error(stop);
    EXPECT_NE(message.find("cannot warn of a preemption"), std::string::npos) << message;
    EXPECT_NE(message.find("SIGTERM and SIGINT already stop the job"), std::string::npos) << message;
    EXPECT_NE(message.find("Use USR1 or USR2"), std::string::npos) << message;
  }
  for (const char* nonsense : {"FOO", "", "@60", "USR3", "99"}) {
    std::string message = signal_error(nonsense);
    EXPECT_NE(message.find("is not a signal"), std::string::npos) << nonsense << ": " << message;
  }
  for (const char* time : {"USR1@", "USR1@-1", "USR1@65536", "USR1@1m", "USR1@ 5"}) {
    std::string message = signal_error(time);
    EXPECT_NE(message.find("from 0 to 65535"), std::string::npos) << time << ": " << message;
  }
  EXPECT_NE(signal_error("X:USR1").find("not a prefix sbatch knows"), std::string::npos);
  EXPECT_NE(signal_error(":USR1").find("not a prefix sbatch knows"), std::string::npos);
}

TEST(SubmitOptions, RequeueRefusals) {
  std::string alone = error_of(with({{"requeue", true}}));
  EXPECT_NE(alone.find("requeue (from --requeue) needs a signal"), std::string::npos) << alone;
  EXPECT_NE(alone.find("Add --signal USR1@120"), std::string::npos) << alone;

  std::string srun = error_of(with({{"requeue", true}, {"signal", std::string("USR1")}, {"srun", true}}));
  EXPECT_NE(srun.find("cannot be used with --srun (from --srun)"), std::string::npos) << srun;
  EXPECT_NE(srun.find("batch jobs only"), std::string::npos) << srun;

  std::string task = error_of(with({{"requeue", true},
                                    {"signal", std::string("USR1")},
                                    {"launch", std::string("task")}}));
  EXPECT_NE(task.find("cannot be used with --launch task (from --launch)"), std::string::npos) << task;
  EXPECT_NE(task.find("no dlaunch run"), std::string::npos) << task;

  // A refused --signal is named before --requeue's own checks.
  EXPECT_NE(error_of(with({{"requeue", true}, {"signal", std::string("TERM")}})).find("SIGTERM"),
            std::string::npos);
  EXPECT_EQ(error_of(with({{"requeue", true}, {"signal", std::string("USR2@30")}})), "no error");
  // --signal alone is fine in every mode.
  EXPECT_EQ(error_of(with({{"signal", std::string("USR1")}, {"srun", true}})), "no error");
  EXPECT_EQ(error_of(with({{"signal", std::string("USR1")}, {"launch", std::string("task")}})),
            "no error");
}

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
  constexpr const char* kConfig = R"([defaults]
signal = "USR2@300"
requeue = true

[profiles.quick]
signal = "USR1@30"
requeue = false

[profiles.wrong]
signal = "B:USR1@60"
)";
  SubmitSettings defaults = read(kConfig);
  JobRequest request = request_for(defaults);
  ASSERT_TRUE(request.signal);
  EXPECT_EQ(request.signal->sbatch_value(), "USR2@300");
  EXPECT_TRUE(request.requeue);
  EXPECT_NE(defaults.find("signal")->source.find("[defaults]"), std::string::npos);

  SubmitSettings quick = read(kConfig, "quick");
  request = request_for(quick);
  EXPECT_EQ(request.signal->sbatch_value(), "USR1@30");
  EXPECT_FALSE(request.requeue);

  // The refusal names the file, line and table the value came from.
  std::string message = error_of(read(kConfig, "wrong"));
  EXPECT_NE(message.find(path_ + ":10 [profiles.wrong]"), std::string::npos) << message;
  EXPECT_NE(message.find("only the batch shell"), std::string::npos) << message;

  // Underscores work as for every key; wrong types are named.
  EXPECT_TRUE(read("[defaults]\nrequeue = true\nsignal = \"USR1\"\n").flag("requeue"));
  try {
    read("[defaults]\nrequeue = \"yes\"\n");
    FAIL() << "a string for requeue was accepted";
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("'requeue' must be true or false"), std::string::npos)
        << error.what();
  }
  try {
    read("[defaults]\nsignal = 10\n");
    FAIL() << "an integer for signal was accepted";
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("'signal' must be a string"), std::string::npos)
        << error.what();
  }
}

// The flags as typed reach the job request with the flag as their source, so
// a refusal says which flag to fix.
TEST(SubmitOptions, ControlCharactersInFlagsAreRefusedNamingTheFlag) {
  for (const char* flag : {"--job-name", "--partition", "--sbatch-arg", "--output-dir", "--time"}) {
    auto options = parse_submit_options({flag, "x\ntouch /tmp/pwned", "train.py"});
    ASSERT_TRUE(options);
    SubmitSettings merged = default_submit_settings();
    for (const auto& [name, value] : options->flags.values()) merged.set(name, value.value, value.source);
    std::string message = error_of(merged);
    EXPECT_NE(message.find(std::string(flag).substr(2) + " (from " + flag + ") contains a newline"),
              std::string::npos)
        << message;
  }
  // Where a newline is legal: the program's own arguments.
  auto options = parse_submit_options({"--run-arg=--prefix=a\nb", "train.py", "x\ny"});
  ASSERT_TRUE(options);
  EXPECT_EQ(options->command, (std::vector<std::string>{"train.py", "x\ny"}));
  EXPECT_EQ(error_of(options->flags), "no error");
}

}  // namespace
}  // namespace dlaunch::submit
