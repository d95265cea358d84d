// What dlaunch submit checks before sbatch: each refusal beside the
// accepted neighbour that shows what the rule allows.
#include "submit/before_sbatch.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "../test_support/input_error.h"
#include "flag_settings.h"
#include "process/worker_process.h"
#include "submit/config_file.h"
#include "util/error.h"

namespace dlaunch::submit {
namespace {

using test_support::input_error_of;
using test_support::with;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// What check_node_arguments says of SETTINGS' job (train.py), or "no error".
std::string nodes_say(const SubmitSettings& settings, bool srun = false) {
  return input_error_of([&] { check_node_arguments(test_support::request_for(settings), settings, srun); });
}

using Words = std::vector<std::string>;

TEST(BeforeSbatch, ARunArgTheNodesWouldRefuseIsRefusedNamingIt) {
  std::string message = nodes_say(with({{"run-arg", Words{"--bogus-option"}}}));
  EXPECT_TRUE(contains(message, "dlaunch submit: unknown option '--bogus-option' for dlaunch run")) << message;
  EXPECT_TRUE(contains(message, "(given as run-arg '--bogus-option' (from --run-arg))")) << message;
  EXPECT_TRUE(contains(message, "before sbatch: nothing was submitted")) << message;
  EXPECT_TRUE(contains(nodes_say(with({{"run-arg", Words{"--bogus-option"}}}), true), "before srun")) << message;
  EXPECT_EQ(nodes_say(with({{"run-arg", Words{"--console-overflow=drop"}}})), "no error");
}

TEST(BeforeSbatch, ASettingTheNodesWouldRefuseIsRefusedNamingIt) {
  std::string message = nodes_say(with({{"prefix", std::string("{bogus")}}));
  EXPECT_TRUE(contains(message, "--prefix '{bogus' is not a valid template")) << message;
  EXPECT_TRUE(contains(message, "(given as prefix (from --prefix))")) << message;
  EXPECT_EQ(nodes_say(with({{"prefix", std::string("[{rank}]")}})), "no error");
  // Restarts the health check needs: refused as every node's dlaunch run would refuse it.
  EXPECT_TRUE(contains(nodes_say(with({{"health-check", std::string("true")}})), "it would never run"));
  EXPECT_EQ(nodes_say(with({{"health-check", std::string("true")}, {"max-restarts", std::int64_t{1}}})), "no error");
  EXPECT_TRUE(contains(nodes_say(with({{"retry-repeated-failures", true}})), "there are none to spend"));
  EXPECT_EQ(nodes_say(with({{"retry-repeated-failures", true}, {"max-restarts", std::int64_t{1}}})), "no error");
}

TEST(BeforeSbatch, TheStepIsTheRequestedNodesAndSpares) {
  // A step of nodes + spares: --min-nodes within the training nodes.
  auto settings = with({{"nodes", std::int64_t{2}}, {"spare-nodes", std::int64_t{1}}, {"min-nodes", std::int64_t{2}}});
  EXPECT_EQ(nodes_say(settings), "no error");
  // min-nodes as a setting and again as a --run-arg with another value: both named.
  settings.set("run-arg", Words{"--min-nodes=3"}, "--run-arg");
  EXPECT_TRUE(contains(nodes_say(settings), "'--min-nodes 2' and '--min-nodes=3'")) << nodes_say(settings);
  auto run_arg_only = with({{"nodes", std::int64_t{2}}, {"spare-nodes", std::int64_t{1}}});
  run_arg_only.set("run-arg", Words{"--min-nodes=3"}, "--run-arg");
  EXPECT_TRUE(contains(nodes_say(run_arg_only), "--min-nodes must be from 1 to --nnodes (2)")) << nodes_say(run_arg_only);
  // One task per GPU: dlaunch exec's parser judges.
  auto task = with({{"launch", std::string("task")}, {"run-arg", Words{"--bogus"}}});
  EXPECT_TRUE(contains(nodes_say(task), "for dlaunch exec")) << nodes_say(task);
}

TEST(BeforeSbatch, RunArgsFromTheConfigFileNameTheFile) {
  const std::string path = ::testing::TempDir() + "before_sbatch_test.toml";
  std::ofstream(path) << "[defaults]\nrun-args = [\"--bogus\"]\n";
  SubmitSettings settings = default_submit_settings();
  apply_config_file(settings, path, std::nullopt);
  std::string message = nodes_say(settings);
  EXPECT_TRUE(contains(message, "(given as run-arg '--bogus' (from " + path)) << message;
  std::filesystem::remove(path);
}

TEST(BeforeSbatch, SetupLinesAreCheckedWithBashWithoutRunningThem) {
  if (!process::find_executable("bash", util::Environment::from_process())) GTEST_SKIP() << "no bash here";
  const std::string marker = ::testing::TempDir() + "before_sbatch_setup_ran";
  std::filesystem::remove(marker);
  std::string message = input_error_of([&] { check_setup_lines({"touch " + marker, "if true; then"}, "--setup"); });
  EXPECT_TRUE(contains(message, "setup (from --setup) is not valid bash")) << message;
  EXPECT_TRUE(contains(message, "syntax error")) << message;
  EXPECT_EQ(input_error_of([&] { check_setup_lines({"touch " + marker, "module load cuda"}, "--setup"); }), "no error");
  EXPECT_FALSE(std::filesystem::exists(marker)) << "bash -n ran a line";
  EXPECT_EQ(input_error_of([&] { check_setup_lines({}, "--setup"); }), "no error");
}

class ProgramHere : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "before_sbatch_program";
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text, mode_t mode) {
    std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    ::chmod(path.c_str(), mode);
    return path;
  }
  std::string says(const std::string& program, Words run_args = {}, const std::string& python = "python3") {
    return input_error_of([&] { check_program_here({program, "--lr", "1"}, run_args, python); });
  }
  std::string dir_;
};

TEST_F(ProgramHere, APathMustBeAnExecutableHere) {
  EXPECT_TRUE(contains(says(dir_ + "/missing"), "no such program here"));
  std::string plain = write("tool", "#!/bin/sh\n", 0644);
  EXPECT_TRUE(contains(says(plain), "the file is not executable")) << says(plain);
  EXPECT_TRUE(contains(says(plain), "chmod +x " + plain));
  std::string tool = write("tool2", "#!/bin/sh\n", 0755);
  EXPECT_EQ(says(tool), "no error");
  // A module is the nodes' Python's to find.
  EXPECT_EQ(says("mypackage.train", {"-m"}), "no error");
}

TEST_F(ProgramHere, AScriptIsCompiledByTheJobsInterpreterWhenItIsHere) {
  if (!process::find_executable("python3", util::Environment::from_process())) GTEST_SKIP() << "no python3 here";
  std::string broken = write("broken.py", "def f(:\n    pass\n", 0644);
  std::string message = says(broken);
  EXPECT_TRUE(contains(message, "cannot compile it")) << message;
  EXPECT_TRUE(contains(message, "SyntaxError")) << message;
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/__pycache__")) << "the check wrote bytecode";
  EXPECT_EQ(says(write("good.py", "print('hi')\n", 0644)), "no error");
  // An interpreter this machine does not have: the nodes' is not judged by another.
  EXPECT_EQ(says(broken, {}, "/nowhere/python3"), "no error");
  // --no-python runs the file itself: then it must be executable.
  EXPECT_TRUE(contains(says(broken, {"--no-python"}), "not executable"));
  EXPECT_TRUE(contains(says(dir_ + "/missing.py"), "no such program here"));
}

TEST(BeforeSbatch, TheJobsPythonIsTheLastOneNamed) {
  EXPECT_EQ(job_python(with({})), "python3");
  EXPECT_EQ(job_python(with({{"python", std::string("/opt/py/bin/python")}})), "/opt/py/bin/python");
  EXPECT_EQ(job_python(with({{"python", std::string("/a")}, {"run-arg", Words{"--python=/b"}}})), "/b");
}

}  // namespace
}  // namespace dlaunch::submit
