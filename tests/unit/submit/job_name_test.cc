// The job name derived from the command: the script or module it runs,
// whatever wraps it and whatever arguments follow.
#include "submit/job_name.h"

#include <gtest/gtest.h>

namespace dlaunch::submit {
namespace {

struct Shape {
  std::vector<std::string> command;
  const char* name;
};

TEST(JobName, IsTheScriptOrModuleNotTheLastArgument) {
  const std::vector<Shape> shapes = {
      // The two: the last argument named the job.
      {{"python3", "-m", "mypkg.train", "--epochs", "3"}, "mypkg.train"},
      {{"train.py", "--cfg", "x y"}, "train"},
      // A script, by path, with or without an interpreter.
      {{"train.py"}, "train"},
      {{"/shared/proj/train.py", "--lr", "0.1"}, "train"},
      {{"/usr/bin/python3", "examples/allreduce.py"}, "allreduce"},
      {{"python", "train.py", "--out", "/tmp/run.py"}, "train"},
      {{"python3.11", "-u", "-W", "ignore", "-X", "dev", "train.py", "--epochs", "3"}, "train"},
      {{"pypy3", "-O", "bench.py"}, "bench"},
      {{"./my_trainer", "--epochs", "10"}, "my_trainer"},
      {{"bin/trainer"}, "trainer"},
      {{"run.sh", "a", "b"}, "run"},
      {{"bash", "-x", "scripts/run.sh", "--fast"}, "run"},
      // Wrappers in front, with their options and the options' values.
      {{"env", "OMP_NUM_THREADS=4", "-u", "HOME", "python3", "train.py"}, "train"},
      {{"/usr/bin/env", "python3", "-m", "mypkg.train"}, "mypkg.train"},
      {{"torchrun", "--nproc-per-node", "8", "--nnodes=2", "--standalone", "train.py", "--lr", "1"}, "train"},
      {{"torchrun", "--nproc_per_node=4", "-m", "mypkg.train", "--x", "y"}, "mypkg.train"},
      {{"python3", "-m", "torch.distributed.run", "--nproc-per-node", "2", "train.py", "--epochs", "3"}, "train"},
      {{"python", "-m", "torch.distributed.launch", "--use_env", "ddp.py"}, "ddp"},
      {{"numactl", "--cpunodebind=0", "-m", "0", "python3", "train.py"}, "train"},
      {{"taskset", "-c", "0-7", "python3", "train.py"}, "train"},
      {{"timeout", "-s", "INT", "3600", "python3", "train.py"}, "train"},
      {{"nohup", "nice", "-n", "5", "./trainer", "7"}, "trainer"},
      {{"accelerate", "launch", "--multi_gpu", "--num_processes", "8", "train.py"}, "train"},
      {{"deepspeed", "--num_gpus", "8", "train.py", "--deepspeed_config", "ds.json"}, "train"},
      {{"bash", "-c", "python3 train.py --lr 1"}, "train"},
      // A value-taking guess never swallows the script.
      {{"torchrun", "--unknown-flag", "train.py", "3"}, "train"},
      // Code on the command line runs no file: the interpreter names it.
      {{"python3", "-c", "print(1)"}, "python3"},
      {{"python3"}, "python3"},
      {{"env"}, "env"},
      {{"python3", "-m"}, "python3"},
  };
  for (const Shape& shape : shapes) {
    std::string words;
    for (const auto& word : shape.command) words += "[" + word + "] ";
    EXPECT_EQ(derived_job_name(shape.command), shape.name) << words;
  }
}

TEST(JobName, IsOneWordSlurmAndAShellTakeAsIs) {
  EXPECT_EQ(derived_job_name({"my train.py"}), "my_train");
  EXPECT_EQ(derived_job_name({"tr\nain.py"}), "tr_ain");
  EXPECT_EQ(derived_job_name({"caf\xc3\xa9.py"}), "caf__");
  EXPECT_EQ(derived_job_name({"a$(rm -rf x)'\"#;|&.py"}), "a__rm_-rf_x_______");
  EXPECT_EQ(derived_job_name({"v1.2+cu121_run-3.py"}), "v1.2+cu121_run-3");
}

TEST(JobName, IsBoundedAndNeverEmpty) {
  EXPECT_EQ(derived_job_name({std::string(500, 'a') + ".py"}), std::string(kMaxDerivedJobNameLength, 'a'));
  EXPECT_EQ(derived_job_name({}), kFallbackJobName);
  EXPECT_EQ(derived_job_name({"/"}), kFallbackJobName);
  EXPECT_EQ(derived_job_name({"\t\n"}), kFallbackJobName);
  EXPECT_EQ(sanitized_job_name(""), kFallbackJobName);
  EXPECT_EQ(sanitized_job_name("a b"), "a_b");
}

}  // namespace
}  // namespace dlaunch::submit
