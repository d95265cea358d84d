// Which Python the workers run, and which other one on the node has the
// module a worker lacked.
#include "launch/worker_python.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sys/stat.h>

#include "../test_support/temp_dir.h"

namespace dlaunch::launch {
namespace {

using test_support::TempDir;

// A stand-in interpreter at FOLDER/python3 that "has" the modules in HAS:
// it answers the probe (python3 -c CODE MODULE) with 0 for them, 3 else.
std::string fake_python(const std::string& folder, const std::string& has) {
  ::mkdir(folder.c_str(), 0700);
  std::string path = folder + "/python3";
  std::ofstream(path) << "#!/bin/sh\ncase \" " << has << " \" in *\" $3 \"*) exit 0;; esac\nexit 3\n";
  ::chmod(path.c_str(), 0700);
  return path;
}

RunOptions options_with(std::vector<std::string> args) {
  args.push_back("train.py");
  return *parse_run_options(args, util::Environment());
}

const std::vector<std::string> kTorchMissing = {
    "Traceback (most recent call last):",
    "  File \"/home/u/train.py\", line 3, in <module>",
    "    import torch.distributed as dist",
    "ModuleNotFoundError: No module named 'torch'",
};

TEST(WorkerPython, TheMissingModuleIsReadFromTheTraceback) {
  EXPECT_EQ(missing_module(kTorchMissing), "torch");
  EXPECT_EQ(missing_module({"ModuleNotFoundError: No module named 'torch.cuda'"}), "torch");
  EXPECT_EQ(missing_module({"ImportError: No module named yaml"}), "yaml") << "Python 2's wording";
  EXPECT_EQ(missing_module({"ValueError: bad config", "exit 1"}), std::nullopt);
}

TEST(WorkerPython, TheInterpreterAndItsSource) {
  TempDir dir;
  std::string used = fake_python(dir.path() + "/env", "");
  util::Environment environment({{"PATH", dir.path() + "/env:/usr/bin"}});
  WorkerPython python = choose_worker_python(options_with({}), environment);
  EXPECT_EQ(python.name, "python3");
  EXPECT_EQ(python.path, used);
  EXPECT_EQ(python.describe(), used + " (python3 in PATH)");

  util::Environment with_exec({{"PATH", "/usr/bin"}, {"PYTHON_EXEC", "/nowhere/python"}});
  WorkerPython exec = choose_worker_python(options_with({}), with_exec);
  EXPECT_EQ(exec.source, "$PYTHON_EXEC");
  EXPECT_EQ(exec.path, std::nullopt);
  EXPECT_NE(exec.describe().find("not found in the workers' PATH"), std::string::npos);
  EXPECT_EQ(choose_worker_python(options_with({"--python", used}), with_exec).source, "--python");
}

TEST(WorkerPython, AnotherInterpreterWithTheModuleIsNamed) {
  TempDir dir;
  std::string used = fake_python(dir.path() + "/pyenv", "numpy");
  std::string other = fake_python(dir.path() + "/system", "numpy torch");
  util::Environment environment({{"PATH", dir.path() + "/pyenv:" + dir.path() + "/system"}});
  WorkerPython python = choose_worker_python(options_with({}), environment);
  ASSERT_EQ(python.path, used);
  auto candidates = other_pythons(python, environment);
  ASSERT_FALSE(candidates.empty());
  EXPECT_EQ(candidates.front(), other) << "the used one is not asked again";
  EXPECT_EQ(python_with_module("torch", candidates), other);
  auto hint = import_hint(kTorchMissing, python, environment);
  ASSERT_TRUE(hint);
  EXPECT_NE(hint->find(used + " (python3 in PATH), which has no module 'torch'"), std::string::npos) << *hint;
  EXPECT_NE(hint->find(other + " on this node has it: give --python " + other), std::string::npos) << *hint;
}

TEST(WorkerPython, NoInterpreterWithTheModuleIsSaidToo) {
  TempDir dir;
  fake_python(dir.path() + "/only", "");
  util::Environment environment({{"PATH", dir.path() + "/only"}});
  WorkerPython python = choose_worker_python(options_with({}), environment);
  // /usr/bin/python3 may exist here and has no module of this name.
  auto hint = import_hint({"ModuleNotFoundError: No module named 'dlaunch_no_such_module_xyz'"}, python, environment);
  ASSERT_TRUE(hint);
  EXPECT_NE(hint->find("no other python3"), std::string::npos) << *hint;
  EXPECT_EQ(import_hint({"ValueError: x"}, python, environment), std::nullopt);
}

}  // namespace
}  // namespace dlaunch::launch
