// dlaunch submit's job scripts and commands for a set of option combinations.
#include "submit/job_script.h"

#include <gtest/gtest.h>

#include "util/error.h"

namespace dlaunch::submit {
namespace {

JobRequest request_for(SubmitSettings settings, std::vector<std::string> command = {"train.py"}) {
  return make_job_request(settings, std::move(command), "/opt/dlaunch", "/out/20261202_120000",
                          "20261202_120000");
}

SubmitSettings with(std::initializer_list<std::pair<const char*, Value>> values) {
  SubmitSettings settings = default_submit_settings();
  for (const auto& [name, value] : values) settings.set(name, value, "test");
  return settings;
}

TEST(JobScript, DefaultsGiveOneNodeOneGpu) {
  EXPECT_EQ(job_script(request_for(default_submit_settings())),
            "#!/bin/bash\n"
            "#SBATCH --job-name=train.py\n"
            "#SBATCH --nodes=1\n"
            "#SBATCH --ntasks-per-node=1\n"
            "#SBATCH --gpus-per-node=1\n"
            "#SBATCH --output=/out/20261202_120000/slurm-%j.log\n"
            "\n"
            "# Written by dlaunch submit. Every node runs dlaunch, which derives nodes,\n"
            "# node rank, GPUs, master address and port from the Slurm step.\n"
            "export TIMESTAMP=20261202_120000\n"
            "export OUTPUT_DIR=/out/20261202_120000\n"
            "srun --nodes=1 --ntasks-per-node=1 --gpus-per-node=1 "
            "/opt/dlaunch run --log-dir /out/20261202_120000/logs -- train.py\n");
}

TEST(JobScript, EveryResourceOptionAndPassThrough) {
  auto settings = with({{"nodes", std::int64_t{4}},
                        {"gpus-per-node", std::int64_t{8}},
                        {"cpus-per-gpu", std::int64_t{6}},
                        {"partition", std::string("gpu")},
                        {"job-name", std::string("llm")},
                        {"time", std::string("2-00:00:00")},
                        {"account", std::string("proj")},
                        {"qos", std::string("high")},
                        {"constraint", std::string("a100&ib")},
                        {"exclusive", true},
                        {"mem", std::string("500G")},
                        {"sbatch-arg", std::vector<std::string>{"--quotatype=reserved", "--comment=x y"}},
                        {"max-restarts", std::int64_t{3}},
                        {"python", std::string("/usr/bin/python3")}});
  EXPECT_EQ(job_script(request_for(settings, {"train.py", "--lr", "0.1"})),
            "#!/bin/bash\n"
            "#SBATCH --job-name=llm\n"
            "#SBATCH --partition=gpu\n"
            "#SBATCH --account=proj\n"
            "#SBATCH --qos=high\n"
            "#SBATCH --time=2-00:00:00\n"
            "#SBATCH --constraint=a100&ib\n"
            "#SBATCH --mem=500G\n"
            "#SBATCH --nodes=4\n"
            "#SBATCH --ntasks-per-node=1\n"
            "#SBATCH --gpus-per-node=8\n"
            "#SBATCH --cpus-per-task=48\n"
            "#SBATCH --exclusive\n"
            "#SBATCH --output=/out/20261202_120000/slurm-%j.log\n"
            "#SBATCH --quotatype=reserved\n"
            "#SBATCH --comment=x y\n"
            "\n"
            "# Written by dlaunch submit. Every node runs dlaunch, which derives nodes,\n"
            "# node rank, GPUs, master address and port from the Slurm step.\n"
            "export TIMESTAMP=20261202_120000\n"
            "export OUTPUT_DIR=/out/20261202_120000\n"
            "srun --nodes=4 --ntasks-per-node=1 --gpus-per-node=8 --cpus-per-task=48 "
            "/opt/dlaunch run --log-dir /out/20261202_120000/logs --python "
            "/usr/bin/python3 --max-restarts 3 -- train.py --lr 0.1\n");
}

TEST(JobScript, TaskLaunchStartsOneTaskPerGpu) {
  auto request = request_for(with({{"nodes", std::int64_t{3}},
                                   {"gpus-per-node", std::int64_t{4}},
                                   {"cpus-per-gpu", std::int64_t{2}},
                                   {"launch", std::string("task")}}));
  std::string script = job_script(request);
  EXPECT_NE(script.find("#SBATCH --ntasks-per-node=4\n"), std::string::npos);
  EXPECT_NE(script.find("#SBATCH --cpus-per-task=2\n"), std::string::npos);
  EXPECT_NE(script.find("srun --nodes=3 --ntasks-per-node=4 --gpus-per-node=4 --cpus-per-task=2 "
                        "--kill-on-bad-exit=1 /opt/dlaunch exec -- train.py\n"),
            std::string::npos)
      << script;
}

TEST(JobScript, SrunModeRunsTheSameJobInTheForeground) {
  auto request = request_for(with({{"nodes", std::int64_t{2}},
                                   {"partition", std::string("debug")},
                                   {"sbatch-arg", std::vector<std::string>{"--reservation=r1"}}}));
  EXPECT_EQ(shell_join(srun_job_command(request)),
            "srun --job-name=train.py --partition=debug --nodes=2 --ntasks-per-node=1 "
            "--gpus-per-node=1 --reservation=r1 --quit-on-interrupt "
            "/opt/dlaunch run --log-dir /out/20261202_120000/logs -- train.py");
}

TEST(JobScript, ReservedPortsAreRequestedFromSrun) {
  auto request = request_for(with({{"resv-ports", true}}));
  EXPECT_NE(job_script(request).find("--gpus-per-node=1 --resv-ports=1 /opt/dlaunch run"),
            std::string::npos);
  EXPECT_NE(shell_join(srun_job_command(request)).find("--quit-on-interrupt --resv-ports=1 "),
            std::string::npos);
}

TEST(JobScript, ArgumentsAreQuotedForTheShell) {
  EXPECT_EQ(shell_join({"a", "b c", "it's", "", "$HOME", "x=1,y"}),
            "a 'b c' 'it'\\''s' '' '$HOME' x=1,y");
}

TEST(JobScript, SbatchIsAskedForAParsableJobId) {
  EXPECT_EQ(sbatch_command("/out/job.sbatch"),
            (std::vector<std::string>{"sbatch", "--parsable", "/out/job.sbatch"}));
}

TEST(JobScript, BadSettingsNameTheirSource) {
  auto settings = with({{"nodes", std::int64_t{0}}});
  try {
    request_for(settings);
    FAIL();
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("nodes"), std::string::npos);
    EXPECT_NE(std::string(error.what()).find("test"), std::string::npos);
  }
  EXPECT_THROW(request_for(with({{"launch", std::string("nodes")}})), InputError);
  EXPECT_THROW(request_for(with({{"launch", std::string("task")}, {"gpus-per-node", std::int64_t{0}}})),
               InputError);
}

}  // namespace
}  // namespace dlaunch::submit
