// dlaunch submit's job scripts and commands for a set of option combinations.
#include "submit/job_script.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <gtest/gtest.h>
#include <sstream>
#include <sys/stat.h>
#include <sys/wait.h>

#include "../../../fuzz/job_script_reader.h"
#include "../test_support/input_error.h"
#include "flag_settings.h"
#include "submit/script_value.h"
#include "submit/submission_folder.h"
#include "util/error.h"
#include "wire/token.h"

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

// The lines between the exports and the srun line of every --launch node
// script: the worker log folder (per Slurm restart) and the token.
constexpr const char* kLogDirAndToken =
    "# Worker logs: logs/ on the first run; logs/requeue_N/ when Slurm started the job\n"
    "# again after N requeues (SLURM_RESTART_COUNT=N), so no run overwrites another's.\n"
    "log_dir=/out/20261202_120000/logs\n"
    "if [ \"${SLURM_RESTART_COUNT:-0}\" != 0 ]; then\n"
    "  log_dir=/out/20261202_120000/logs/requeue_\"$SLURM_RESTART_COUNT\"\n"
    "  echo \"dlaunch: job $SLURM_JOB_ID started again after requeue $SLURM_RESTART_COUNT; "
    "worker logs in $log_dir\"\n"
    "fi\n"
    "# The rendezvous secret every node's dlaunch run proves (the file is readable by you only).\n"
    "DLAUNCH_RDZV_TOKEN=$(cat /out/20261202_120000/rdzv.token) || exit 1\n"
    "export DLAUNCH_RDZV_TOKEN\n";

// What starts the step of every --launch node script: the step guard
// (step_guard.h), which ends it by the job's verdict, with its grace: the
// default --shutdown-timeout (30 s) and 5 s.
constexpr const char* kStepGuard =
    "# The step ends when srun does, or shortly after the job's verdict is in: a lost\n"
    "# node's task (frozen, cut off, powered off) never reports to srun.\n"
    "/opt/dlaunch __run-step /out/20261202_120000/exit_code 35 -- ";

// What every launcher of a batch job is told of the job's verdict: where to
// write it, and when to cancel the job itself should the batch host be lost
// (the guard's grace and 10 s).
constexpr const char* kVerdictOptions =
    "--exit-code-file /out/20261202_120000/exit_code --end-job-after 45";

TEST(JobScript, DefaultsGiveOneNodeOneGpu) {
  EXPECT_EQ(job_script(request_for(default_submit_settings())),
            std::string("#!/bin/bash\n"
                        "#SBATCH --job-name=train\n"
                        "#SBATCH --nodes=1\n"
                        "#SBATCH --ntasks-per-node=1\n"
                        "#SBATCH --gpus-per-node=1\n"
                        "#SBATCH --cpus-per-task=1\n"
                        "#SBATCH --output=/out/20261202_120000/slurm-%j.log\n"
                        "#SBATCH --open-mode=append\n"
                        "\n"
                        "# Written by dlaunch submit. Every node runs dlaunch, which derives nodes,\n"
                        "# node rank, GPUs, master address and port from the Slurm step.\n"
                        "export TIMESTAMP=20261202_120000\n"
                        "export OUTPUT_DIR=/out/20261202_120000\n") +
                kLogDirAndToken + kStepGuard +
                "srun --nodes=1 --ntasks-per-node=1 --gpus-per-node=1 --cpus-per-task=1 --wait=60 "
                "/opt/dlaunch run --log-dir \"$log_dir\" " + kVerdictOptions + " -- train.py\n");
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
            "#SBATCH --open-mode=append\n"
            "#SBATCH --quotatype=reserved\n"
            "#SBATCH '--comment=x y'\n"
            "\n"
            "# Written by dlaunch submit. Every node runs dlaunch, which derives nodes,\n"
            "# node rank, GPUs, master address and port from the Slurm step.\n"
            "export TIMESTAMP=20261202_120000\n"
            "export OUTPUT_DIR=/out/20261202_120000\n" +
                std::string(kLogDirAndToken) + kStepGuard +
                "srun --nodes=4 --ntasks-per-node=1 --gpus-per-node=8 --cpus-per-task=48 "
                "--wait=60 /opt/dlaunch run --log-dir \"$log_dir\" " + kVerdictOptions + " --python="
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
  // No rendezvous, so no token; no dlaunch run, so no log folder.
  EXPECT_EQ(script.find("DLAUNCH_RDZV_TOKEN"), std::string::npos) << script;
  EXPECT_EQ(script.find("log_dir"), std::string::npos) << script;
  EXPECT_FALSE(request.token_file);
}

TEST(JobScript, SignalAndRequeue) {
  auto request = request_for(with({{"nodes", std::int64_t{2}},
                                   {"gpus-per-node", std::int64_t{2}},
                                   {"signal", std::string("USR1@90")},
                                   {"requeue", true}}));
  EXPECT_EQ(job_script(request),
            std::string("#!/bin/bash\n"
                        "#SBATCH --job-name=train\n"
                        "#SBATCH --nodes=2\n"
                        "#SBATCH --ntasks-per-node=1\n"
                        "#SBATCH --gpus-per-node=2\n"
                        "#SBATCH --cpus-per-task=2\n"
                        "#SBATCH --signal=USR1@90\n"
                        "#SBATCH --requeue\n"
                        "#SBATCH --output=/out/20261202_120000/slurm-%j.log\n"
                        "#SBATCH --open-mode=append\n"
                        "\n"
                        "# Written by dlaunch submit. Every node runs dlaunch, which derives nodes,\n"
                        "# node rank, GPUs, master address and port from the Slurm step.\n"
                        "export TIMESTAMP=20261202_120000\n"
                        "export OUTPUT_DIR=/out/20261202_120000\n") +
                kLogDirAndToken + kStepGuard +
                "srun --nodes=2 --ntasks-per-node=1 --gpus-per-node=2 --cpus-per-task=2 --wait=60 "
                "/opt/dlaunch run --log-dir "
                "\"$log_dir\" --preempt-signal USR1 --requeue --bench-record "
                "/out/20261202_120000/bench-record.json " + kVerdictOptions + " -- train.py\n");
}

TEST(JobScript, SignalWithoutRequeueAndInTheOtherModes) {
  auto request = request_for(with({{"signal", std::string("R:SIGUSR2@600")}}));
  std::string script = job_script(request);
  EXPECT_NE(script.find("#SBATCH --signal=R:USR2@600\n"), std::string::npos) << script;
  EXPECT_EQ(script.find("--requeue"), std::string::npos) << script;
  EXPECT_NE(script.find("#SBATCH --open-mode=append\n"), std::string::npos) << script;
  EXPECT_NE(script.find("run --log-dir \"$log_dir\" --preempt-signal USR2 " + std::string(kVerdictOptions) +
                        " -- train.py"),
            std::string::npos)
      << script;
  // --srun: srun takes --signal itself; the step guard runs here, so the
  // launchers never cancel the job themselves.
  EXPECT_EQ(util::shell_join(srun_job_command(request)),
            "srun --job-name=train --nodes=1 --ntasks-per-node=1 --gpus-per-node=1 --cpus-per-task=1 "
            "--signal=R:USR2@600 --wait=60 --quit-on-interrupt /opt/dlaunch run --log-dir "
            "/out/20261202_120000/logs --preempt-signal USR2 --exit-code-file "
            "/out/20261202_120000/exit_code -- train.py");
  // One task per GPU: Slurm signals the tasks, which are the programs themselves.
  auto task = request_for(with({{"signal", std::string("12@30")}, {"launch", std::string("task")}}));
  script = job_script(task);
  EXPECT_NE(script.find("#SBATCH --signal=USR2@30\n"), std::string::npos) << script;
  EXPECT_EQ(script.find("--preempt-signal"), std::string::npos) << script;
}

TEST(JobScript, AWorkerLogFolderForEachSlurmRestart) {
  // The folder's name needs quoting; the script still sets $log_dir right.
  auto request = make_job_request(default_submit_settings(), {"train.py"}, "/opt/dlaunch",
                                  "/out/it's here", "t");
  std::string script = job_script(request);
  EXPECT_NE(script.find("log_dir='/out/it'\\''s here/logs'\n"), std::string::npos) << script;
  EXPECT_NE(script.find("  log_dir='/out/it'\\''s here/logs/requeue_'\"$SLURM_RESTART_COUNT\"\n"),
            std::string::npos)
      << script;
  EXPECT_NE(script.find("DLAUNCH_RDZV_TOKEN=$(cat '/out/it'\\''s here/rdzv.token') || exit 1\n"),
            std::string::npos)
      << script;
  // Only the launcher's --log-dir is the variable: a program argument of the
  // same spelling stays as it was.
  auto same = request_for(default_submit_settings(), {"train.py", "--log-dir", "mine"});
  EXPECT_NE(job_script(same).find("--log-dir \"$log_dir\" " + std::string(kVerdictOptions) +
                                  " -- train.py --log-dir mine\n"),
            std::string::npos);
}

// The real dlaunch: a script's step guard (`dlaunch __run-step`) is dlaunch.
const std::string kDlaunch = DLAUNCH_BINARY;

// An executable `srun` in FOLDER/bin that runs BODY (bash; srun's arguments
// in "$@"), for a script run by run_script or script_status to find first
// in PATH. The step guard starts it as it would start srun.
void fake_srun(const std::string& folder, const std::string& body) {
  std::filesystem::create_directories(folder + "/bin");
  const std::string path = folder + "/bin/srun";
  std::ofstream(path) << "#!/bin/bash\n" << body << "\n";
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
}

// `env -i` with FOLDER/bin first in PATH, VARIABLES, then bash running FILE.
std::string script_command(const std::string& folder, const std::string& variables, const std::string& file) {
  return "env -i " + util::shell_join({"PATH=" + folder + "/bin:/usr/bin:/bin"}) + " " + variables + " bash " +
         util::shell_join({file});
}

// Runs SCRIPT with bash in FOLDER, srun replaced by a program that prints
// the token it was given and its arguments, with VARIABLES set.
std::string run_script(const std::string& folder, const std::string& script,
                       const std::string& variables) {
  std::ofstream(folder + "/job.sbatch") << script;
  fake_srun(folder, "echo \"token=$DLAUNCH_RDZV_TOKEN\"; printf 'arg=%s\\n' \"$@\"");
  std::string command = script_command(folder, variables, folder + "/job.sbatch") + " 2>&1";
  std::FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return "popen failed";
  std::string output;
  char buffer[4096];
  std::size_t got;
  while ((got = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) output.append(buffer, got);
  ::pclose(pipe);
  return output;
}

TEST(JobScript, TheScriptReadsTheTokenAndPicksTheLogFolder) {
  const std::string folder = ::testing::TempDir() + "dlaunch job 'script' test";
  std::filesystem::remove_all(folder);
  std::filesystem::create_directories(folder);
  auto request = make_job_request(with({{"signal", std::string("USR1")}, {"requeue", true}}),
                                  {"train.py"}, kDlaunch, folder, "t");
  const std::string token = rendezvous::generate_token();
  write_secret_file(*request.token_file, token);
  const std::string script = job_script(request);

  std::string first = run_script(folder, script, "SLURM_JOB_ID=7");
  EXPECT_NE(first.find("token=" + token + "\n"), std::string::npos) << first;
  EXPECT_NE(first.find("arg=--log-dir\narg=" + folder + "/logs\n"), std::string::npos) << first;
  EXPECT_EQ(first.find("started again"), std::string::npos) << first;
  EXPECT_EQ(run_script(folder, script, "SLURM_JOB_ID=7 SLURM_RESTART_COUNT=0"), first);

  std::string again = run_script(folder, script, "SLURM_JOB_ID=7 SLURM_RESTART_COUNT=2");
  EXPECT_NE(again.find("dlaunch: job 7 started again after requeue 2; worker logs in " + folder +
                       "/logs/requeue_2\n"),
            std::string::npos)
      << again;
  EXPECT_NE(again.find("arg=--log-dir\narg=" + folder + "/logs/requeue_2\n"), std::string::npos)
      << again;

  // Without its token file the job stops before srun.
  std::filesystem::remove(*request.token_file);
  std::string missing = run_script(folder, script, "SLURM_JOB_ID=7");
  EXPECT_EQ(missing.find("arg="), std::string::npos) << missing;
  std::filesystem::remove_all(folder);
}

TEST(JobScript, TheTokenIsInNoScriptAndItsFileIsTheOwnersOnly) {
  const std::string folder = ::testing::TempDir() + "dlaunch_token_test";
  std::filesystem::remove_all(folder);
  std::filesystem::create_directories(folder);
  auto request = make_job_request(with({{"nodes", std::int64_t{2}}}), {"train.py"}, "/opt/dlaunch",
                                  folder, "t");
  ASSERT_TRUE(request.token_file);
  EXPECT_EQ(*request.token_file, folder + "/rdzv.token");
  const std::string token = rendezvous::generate_token();
  EXPECT_EQ(token.size(), 64u);
  // Even a permissive umask gives no one else a look.
  mode_t old_mask = ::umask(0);
  write_secret_file(*request.token_file, token);
  ::umask(old_mask);
  struct stat info {};
  ASSERT_EQ(::stat(request.token_file->c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 07777, 0600u);
  std::stringstream contents;
  contents << std::ifstream(*request.token_file).rdbuf();
  EXPECT_EQ(contents.str(), token + "\n");

  EXPECT_EQ(job_script(request).find(token), std::string::npos);
  EXPECT_EQ(util::shell_join(srun_job_command(request)).find(token), std::string::npos);
  EXPECT_EQ(util::shell_join(srun_step_command(request)).find(token), std::string::npos);
  // Never replaced: each submission writes its own file once.
  EXPECT_THROW(write_secret_file(*request.token_file, rendezvous::generate_token()), util::SystemError);
  std::filesystem::remove_all(folder);
}

TEST(JobScript, SrunModeRunsTheSameJobInTheForeground) {
  auto request = request_for(with({{"nodes", std::int64_t{2}},
                                   {"partition", std::string("debug")},
                                   {"sbatch-arg", std::vector<std::string>{"--reservation=r1"}}}));
  const std::vector<std::string> srun = srun_job_command(request);
  EXPECT_EQ(util::shell_join(srun),
            "srun --job-name=train --partition=debug --nodes=2 --ntasks-per-node=1 "
            "--gpus-per-node=1 --cpus-per-task=1 --reservation=r1 --wait=60 --quit-on-interrupt "
            "/opt/dlaunch run --log-dir /out/20261202_120000/logs --exit-code-file "
            "/out/20261202_120000/exit_code -- train.py");
  // Under the step guard, here: it asks srun to quit (SIGINT) rather than
  // killing it, since srun owns the allocation.
  std::vector<std::string> guarded{"/opt/dlaunch", "__run-step", "/out/20261202_120000/exit_code", "35",
                                   "--foreground", "--"};
  guarded.insert(guarded.end(), srun.begin(), srun.end());
  EXPECT_EQ(foreground_command(request), guarded);
}

TEST(JobScript, SrunEndsStragglersOneShutdownAfterTheFirstLauncherExits) {
  auto request = request_for(default_submit_settings());
  request.run_args = {"--shutdown-timeout", "200"};
  EXPECT_NE(job_script(request).find("--wait=230 "), std::string::npos);
  request.run_args = {"--shutdown_timeout=5"};
  EXPECT_NE(util::shell_join(srun_job_command(request)).find("--wait=35 "), std::string::npos);
  auto tasks = request_for(with({{"launch", std::string("task")}}));
  EXPECT_EQ(job_script(tasks).find("--wait="), std::string::npos);  // --kill-on-bad-exit does it
}

TEST(JobScript, TheStepGuardsGraceFollowsTheShutdownTimeout) {
  auto request = request_for(default_submit_settings());
  request.run_args = {"--shutdown-timeout", "200"};
  std::string script = job_script(request);
  EXPECT_NE(script.find("__run-step /out/20261202_120000/exit_code 205 -- srun "), std::string::npos) << script;
  EXPECT_NE(script.find("--end-job-after 215 --shutdown-timeout 200 -- train.py"), std::string::npos) << script;
  // One task per GPU has no launcher to write a verdict: srun alone.
  auto tasks = request_for(with({{"launch", std::string("task")}}));
  EXPECT_EQ(job_script(tasks).find("__run-step"), std::string::npos);
  EXPECT_EQ(foreground_command(tasks), srun_job_command(tasks));
}

// --- jobs that outlive a node: spare nodes, --min-nodes below --nodes ---

TEST(JobScriptSpares, SpareNodesJoinTheAllocationAndTheStepOutlivesALostOne) {
  auto request = request_for(with({{"nodes", std::int64_t{2}}, {"spare-nodes", std::int64_t{1}}}));
  EXPECT_EQ(request.nodes, 2);
  EXPECT_EQ(request.spare_nodes, 1);
  EXPECT_TRUE(request.outlives_a_node());
  std::string script = job_script(request);
  EXPECT_EQ(script,
            std::string("#!/bin/bash\n"
                        "#SBATCH --job-name=train\n"
                        "#SBATCH --nodes=3\n"
                        "#SBATCH --ntasks-per-node=1\n"
                        "#SBATCH --gpus-per-node=1\n"
                        "#SBATCH --cpus-per-task=1\n"
                        "#SBATCH --no-kill\n"
                        "#SBATCH --output=/out/20261202_120000/slurm-%j.log\n"
                        "#SBATCH --open-mode=append\n"
                        "\n"
                        "# Written by dlaunch submit. Every node runs dlaunch, which derives nodes,\n"
                        "# node rank, GPUs, master address and port from the Slurm step.\n"
                        "export TIMESTAMP=20261202_120000\n"
                        "export OUTPUT_DIR=/out/20261202_120000\n") +
                kLogDirAndToken + kStepGuard +
                "srun --nodes=3 --ntasks-per-node=1 --gpus-per-node=1 --cpus-per-task=1 --no-kill --kill-on-bad-exit=0 "
                "--wait=0 /opt/dlaunch run --log-dir \"$log_dir\" --nnodes 2 " + kVerdictOptions +
                " -- train.py\n");
  // srun's --wait=NN would end the step's other tasks NN s after the lost
  // node's task exits; --wait=0 means no limit, whatever the site's WaitTime.
  EXPECT_EQ(script.find("--wait="), script.rfind("--wait=")) << script;
  EXPECT_NE(script.find("--wait=0 "), std::string::npos) << script;
  // --srun mode: the same options on srun, under the step guard here.
  const std::string srun =
      "srun --job-name=train --nodes=3 --ntasks-per-node=1 --gpus-per-node=1 --cpus-per-task=1 --no-kill "
      "--kill-on-bad-exit=0 --wait=0 --quit-on-interrupt /opt/dlaunch run --log-dir "
      "/out/20261202_120000/logs --nnodes 2 --exit-code-file /out/20261202_120000/exit_code -- train.py";
  EXPECT_EQ(util::shell_join(srun_job_command(request)), srun);
  EXPECT_EQ(util::shell_join(foreground_command(request)),
            "/opt/dlaunch __run-step /out/20261202_120000/exit_code 35 --foreground -- " + srun);
}

TEST(JobScriptSpares, MinNodesBelowNodesOutlivesALostNodeWithoutSpares) {
  auto request = request_for(with({{"nodes", std::int64_t{2}}, {"min-nodes", std::int64_t{1}}}));
  EXPECT_EQ(request.spare_nodes, 0);
  EXPECT_TRUE(request.outlives_a_node());
  std::string script = job_script(request);
  EXPECT_NE(script.find("#SBATCH --nodes=2\n"), std::string::npos) << script;
  EXPECT_NE(script.find("#SBATCH --no-kill\n"), std::string::npos) << script;
  EXPECT_NE(script.find("srun --nodes=2 --ntasks-per-node=1 --gpus-per-node=1 --cpus-per-task=1 --no-kill "
                        "--kill-on-bad-exit=0 --wait=0 /opt/dlaunch run --log-dir \"$log_dir\" " +
                        std::string(kVerdictOptions) + " --min-nodes 1 -- train.py\n"),
            std::string::npos)
      << script;
  // Every node trains: the launchers take --nnodes from the step.
  EXPECT_EQ(script.find("--nnodes"), std::string::npos) << script;

  // --min-nodes equal to --nodes: the job never goes on with fewer, so it is
  // the plain job (and --min-nodes still reaches the launchers).
  auto plain = request_for(with({{"nodes", std::int64_t{2}}, {"min-nodes", std::int64_t{2}}}));
  EXPECT_FALSE(plain.outlives_a_node());
  script = job_script(plain);
  EXPECT_EQ(script.find("--no-kill"), std::string::npos) << script;
  EXPECT_NE(script.find("--wait=60 /opt/dlaunch run --log-dir \"$log_dir\" " + std::string(kVerdictOptions) +
                        " --min-nodes 2 -- train.py\n"),
            std::string::npos)
      << script;
}

// Runs the job script of REQUEST in its folder with srun a program running
// BODY (bash); returns the script's exit status.
int script_status(const JobRequest& request, const std::string& body, const std::string& variables = "") {
  std::ofstream(request.submission_dir + "/job.sbatch") << job_script(request);
  fake_srun(request.submission_dir, body);
  std::string command =
      script_command(request.submission_dir, variables, request.submission_dir + "/job.sbatch") + " >/dev/null 2>&1";
  int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The file srun's --exit-code-file names gets CODE (a launcher's verdict).
std::string writes_verdict(int code) {
  return "while [ $# -gt 0 ]; do [ \"$1\" = --exit-code-file ] && echo " + std::to_string(code) +
         " >\"$2\"; shift; done";
}

TEST(JobScriptSpares, TheScriptExitsWithTheCodeOfTheJobsVerdict) {
  const std::string folder = ::testing::TempDir() + "dlaunch spare 'exit code' test";
  std::filesystem::remove_all(folder);
  std::filesystem::create_directories(folder);
  auto request = make_job_request(with({{"nodes", std::int64_t{2}}, {"spare-nodes", std::int64_t{1}}}),
                                  {"train.py"}, kDlaunch, folder, "t");
  write_secret_file(*request.token_file, rendezvous::generate_token());
  const std::string file = folder + "/exit_code";
  // The launcher that speaks for the job wrote 0; srun failed with the lost
  // node's task's code.
  EXPECT_EQ(script_status(request, writes_verdict(0) + "; exit 137"), 0);
  // A file left by an earlier run (a requeue) is removed first: with no
  // verdict written, the code is srun's.
  std::ofstream(file) << "5\n";
  EXPECT_EQ(script_status(request, "exit 3"), 3);
  EXPECT_FALSE(std::filesystem::exists(file));
  std::filesystem::remove_all(folder);
}

// srun never returns (a lost node's task never reports): the job still
// ends, the grace after the verdict (the shutdown timeout, 0 here, and 5 s).
TEST(JobScriptSpares, AStepThatNeverEndsEndsAfterTheVerdict) {
  const std::string folder = ::testing::TempDir() + "dlaunch guard test";
  std::filesystem::remove_all(folder);
  std::filesystem::create_directories(folder);
  auto settings = with({{"nodes", std::int64_t{2}}, {"shutdown-timeout", std::int64_t{0}}});
  auto request = make_job_request(settings, {"train.py"}, kDlaunch, folder, "t");
  write_secret_file(*request.token_file, rendezvous::generate_token());
  // Returns at all only because the guard ended srun.
  EXPECT_EQ(script_status(request, writes_verdict(6) + "; trap '' TERM INT; exec sleep 600"), 6);
  std::filesystem::remove_all(folder);
}

// sbatch reads the #SBATCH lines of SCRIPT as these options.
std::vector<std::string> sbatch_options_of(const std::string& script) {
  return script_reader::read_sbatch_directives(script).arguments;
}

bool has(const std::vector<std::string>& options, const std::string& option) {
  return std::find(options.begin(), options.end(), option) != options.end();
}

TEST(JobScriptResources, EveryWorkerGetsACpuByDefaultInBothLaunchModes) {
  // --launch node: the node's one task runs all 4 workers.
  auto node = request_for(with({{"gpus-per-node", std::int64_t{4}}}));
  EXPECT_TRUE(has(sbatch_options_of(job_script(node)), "--cpus-per-task=4"));
  EXPECT_TRUE(has(srun_step_command(node), "--cpus-per-task=4"));
  // --launch task: a task per worker.
  auto task = request_for(with({{"gpus-per-node", std::int64_t{4}}, {"launch", std::string("task")}}));
  EXPECT_TRUE(has(sbatch_options_of(job_script(task)), "--cpus-per-task=1"));
  EXPECT_TRUE(has(srun_step_command(task), "--cpus-per-task=1"));
  // --exclusive: the nodes' every CPU, no count to narrow the step.
  auto exclusive = request_for(with({{"gpus-per-node", std::int64_t{4}}, {"exclusive", true}}));
  for (const auto& option : sbatch_options_of(job_script(exclusive)))
    EXPECT_FALSE(option.starts_with("--cpus-per-task")) << option;
}

TEST(JobScriptResources, AGpuRequestInSbatchArgsReplacesDlaunchsGpusPerNode) {
  auto request = request_for(with({{"sbatch-arg", std::vector<std::string>{"--gres=gpu:8"}}}));
  auto options = sbatch_options_of(job_script(request));
  EXPECT_TRUE(has(options, "--gres=gpu:8"));
  for (const auto& option : options) EXPECT_FALSE(option.starts_with("--gpus-per-node")) << option;
  EXPECT_TRUE(has(options, "--cpus-per-task=8"));  // a CPU for each of the 8 workers
  // The step takes every GPU the job has on its node (srun's default).
  for (const auto& word : srun_step_command(request)) EXPECT_FALSE(word.starts_with("--gpus")) << word;
  // With --srun, srun is the allocation: the user's request, not dlaunch's.
  auto srun = srun_job_command(request);
  EXPECT_TRUE(has(srun, "--gres=gpu:8"));
  for (const auto& word : srun) EXPECT_FALSE(word.starts_with("--gpus-per-node")) << word;
  // One task per GPU keeps the count for its tasks.
  auto task = request_for(with({{"launch", std::string("task")}, {"sbatch-arg", std::vector<std::string>{"-G", "4"}}}));
  EXPECT_TRUE(has(sbatch_options_of(job_script(task)), "--ntasks-per-node=4"));
  EXPECT_TRUE(has(srun_step_command(task), "--gpus-per-node=4"));
}

TEST(JobScriptResources, ACpuRequestInSbatchArgsReplacesDlaunchsAndReachesTheStep) {
  auto request = request_for(with({{"gpus-per-node", std::int64_t{2}},
                                   {"sbatch-arg", std::vector<std::string>{"--cpus-per-task=16"}}}));
  auto options = sbatch_options_of(job_script(request));
  EXPECT_EQ(std::count_if(options.begin(), options.end(), [](const auto& o) { return o.starts_with("--cpus"); }), 1);
  EXPECT_TRUE(has(options, "--cpus-per-task=16"));
  // A step does not inherit --cpus-per-task (Slurm 22.05): said again.
  EXPECT_TRUE(has(srun_step_command(request), "--cpus-per-task=16"));
}

TEST(JobScript, ReservedPortsAreRequestedFromSrun) {
  auto request = request_for(with({{"resv-ports", true}}));
  EXPECT_NE(job_script(request).find("--gpus-per-node=1 --cpus-per-task=1 --wait=60 --resv-ports=1 /opt/dlaunch run"),
            std::string::npos);
  EXPECT_NE(util::shell_join(srun_job_command(request)).find("--wait=60 --quit-on-interrupt --resv-ports=1 "),
            std::string::npos);
}

TEST(JobScript, ArgumentsAreQuotedForTheShell) {
  EXPECT_EQ(util::shell_join({"a", "b c", "it's", "", "$HOME", "x=1,y"}),
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
  } catch (const util::InputError& error) {
    EXPECT_NE(std::string(error.what()).find("nodes"), std::string::npos);
    EXPECT_NE(std::string(error.what()).find("test"), std::string::npos);
  }
  EXPECT_THROW(request_for(with({{"launch", std::string("nodes")}})), util::InputError);
  EXPECT_THROW(request_for(with({{"launch", std::string("task")}, {"gpus-per-node", std::int64_t{0}}})),
               util::InputError);
}

// --- values bound for the script: refused with a control character, quoted for sbatch ---

using test_support::input_error_of;

SubmitSettings with_from(const char* name, Value value, const char* source) {
  SubmitSettings settings = default_submit_settings();
  settings.set(name, std::move(value), source);
  return settings;
}

TEST(JobScriptValues, ANewlineInTheJobNameIsRefusedNamingTheFlag) {
  std::string message =
      input_error_of([] { request_for(with_from("job-name", std::string("evil\ntouch /tmp/x"), "--job-name")); });
  EXPECT_NE(message.find("job-name (from --job-name) contains a newline (\\n) at character 5: "
                         "'evil\\ntouch /tmp/x'"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("Remove it from --job-name"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << "the message itself breaks the line";
}

TEST(JobScriptValues, ANewlineInAnSbatchArgOrTheOutputDirIsRefusedNamingTheFlag) {
  std::string message = input_error_of([] {
    request_for(with_from("sbatch-arg",
                          std::vector<std::string>{"--comment=ok", "--x=1\n#SBATCH --partition=other"},
                          "--sbatch-arg"));
  });
  EXPECT_NE(message.find("sbatch-arg (from --sbatch-arg) contains a newline (\\n) at character 6"),
            std::string::npos)
      << message;
  message = input_error_of(
      [] { request_for(with_from("output-dir", std::string("runs\nrm -rf ~"), "--output-dir")); });
  EXPECT_NE(message.find("output-dir (from --output-dir) contains a newline"), std::string::npos)
      << message;
}

TEST(JobScriptValues, EveryControlCharacterInEveryValueBoundForTheScriptIsRefused) {
  for (const char* name : {"job-name", "partition", "account", "qos", "time", "constraint", "mem",
                           "output-dir", "signal", "sbatch-arg"}) {
    ASSERT_TRUE(reaches_script_text(name)) << name;
    for (int code = 0; code < 0x80; ++code) {
      if (code >= 0x20 && code < 0x7f) continue;
      std::string value = std::string("USR1") + static_cast<char>(code) + "@60";
      Value typed = std::string(name) == "sbatch-arg" ? Value(std::vector<std::string>{value})
                                                      : Value(value);
      std::string message = input_error_of([&] { request_for(with_from(name, typed, "--flag")); });
      EXPECT_NE(message.find(std::string(name) + " (from --flag) contains "), std::string::npos)
          << name << " with character " << code << ": " << message;
    }
  }
  // The submission folder comes from the current folder too.
  std::string message = input_error_of([] {
    make_job_request(default_submit_settings(), {"train.py"}, "/opt/dlaunch",
                     "/home/u/odd\x1b[2Jname/slurm-outputs/t", "t");
  });
  EXPECT_NE(message.find("the submission folder (from output-dir 'slurm-outputs' from built-in "
                         "default, under the current folder) contains the control character \\x1b"),
            std::string::npos)
      << message;
}

TEST(JobScriptValues, AnEmptySbatchArgIsRefused) {
  std::string message = input_error_of(
      [] { request_for(with_from("sbatch-arg", std::vector<std::string>{""}, "--sbatch-arg")); });
  EXPECT_NE(message.find("sbatch-arg (from --sbatch-arg) holds an empty value"), std::string::npos)
      << message;
}

TEST(JobScriptValues, TheJobNameDerivedFromTheProgramIsSanitisedNotRefused) {
  auto request =
      request_for(default_submit_settings(), {"/opt/a\nb/tr\x1b" "ain\t.py", "--note", "x\ny"});
  EXPECT_EQ(request.job_name, "tr_ain_");
  auto sbatch = script_reader::read_sbatch_directives(job_script(request));
  ASSERT_FALSE(sbatch.arguments.empty());
  EXPECT_EQ(sbatch.arguments.front(), "--job-name=tr_ain_");
}

TEST(JobScriptValues, ALauncherShutdownTimeoutTheNodesWouldRefuseIsRefusedNow) {
  EXPECT_THROW(
      request_for(with({{"run-arg", std::vector<std::string>{"--shutdown-timeout=99999999999"}}})),
      util::InputError);
  EXPECT_THROW(request_for(with({{"shutdown-timeout", std::int64_t{604801}}})), util::InputError);
  EXPECT_THROW(request_for(with({{"run-arg", std::vector<std::string>{"--shutdown-timeout", "-5"}}})),
               util::InputError);
  EXPECT_NE(job_script(request_for(with({{"shutdown-timeout", std::int64_t{604800}}})))
                .find("--wait=604830 "),
            std::string::npos);
}

TEST(JobScriptQuoting, ValuesWithSpacesQuotesAndHashReachSbatchAsOneArgumentEach) {
  auto settings = with({{"job-name", std::string("my job's \"#1\"")},
                        {"partition", std::string("gpu a")},
                        {"sbatch-arg", std::vector<std::string>{"--comment=x y # z",
                                                                "--comment=a\\b 'q'", "hetjob", ":x"}}});
  auto request =
      make_job_request(settings, {"train.py"}, "/opt/dlaunch", "/out/runs of 'today' #2", "t");
  std::string script = job_script(request);
  EXPECT_NE(script.find(R"(#SBATCH '--job-name=my job'\''s "#1"')" "\n"), std::string::npos)
      << script;
  EXPECT_NE(script.find(R"(#SBATCH '--output=/out/runs of '\''today'\'' #2/slurm-%j.log')" "\n"),
            std::string::npos)
      << script;
  EXPECT_NE(script.find(R"(#SBATCH '--comment=a'\\'b '\''q'\''')" "\n"), std::string::npos)
      << script;

  auto sbatch = script_reader::read_sbatch_directives(script);
  EXPECT_EQ(sbatch.error, "");
  EXPECT_EQ(sbatch.arguments,
            (std::vector<std::string>{"--job-name=my job's \"#1\"", "--partition=gpu a", "--nodes=1",
                                      "--ntasks-per-node=1", "--gpus-per-node=1", "--cpus-per-task=1",
                                      "--output=/out/runs of 'today' #2/slurm-%j.log",
                                      "--open-mode=append", "--comment=x y # z",
                                      "--comment=a\\b 'q'", "hetjob", ":x"}));
}

TEST(JobScriptQuoting, SbatchAndTheShellReadAQuotedWordBackAlike) {
  EXPECT_EQ(util::sbatch_quote("--constraint=a100&ib|[rack1*2]"), "--constraint=a100&ib|[rack1*2]");
  EXPECT_EQ(util::sbatch_quote("--comment=x y"), "'--comment=x y'");
  EXPECT_EQ(util::sbatch_quote("a\\b"), R"('a'\\'b')");
  for (std::string word : {"plain", "a b", "it's", "a\\b", "\\", "'", "\"", "#x", "x#y", "a\\'b",
                           "hetjob", "PackJob", ":x", "caf\xc3\xa9", "' '", "-- x"}) {
    auto sbatch = script_reader::read_sbatch_directives("#SBATCH " + util::sbatch_quote(word) + "\n");
    EXPECT_EQ(sbatch.error, "") << word;
    EXPECT_EQ(sbatch.arguments, std::vector<std::string>{word}) << util::sbatch_quote(word);
    auto shell = script_reader::read_shell_commands("echo " + util::sbatch_quote(word) + "\n");
    ASSERT_EQ(shell.commands.size(), 1u) << util::sbatch_quote(word);
    EXPECT_EQ(shell.commands[0].words, (std::vector<std::string>{"echo", word})) << util::sbatch_quote(word);
    EXPECT_FALSE(shell.commands[0].special[1]) << util::sbatch_quote(word);
  }
  // What quoting is for: bare, these would be cut, split or make sbatch abort.
  EXPECT_EQ(script_reader::read_sbatch_directives("#SBATCH --comment=x#y\n").arguments,
            std::vector<std::string>{"--comment=x"});
  EXPECT_EQ(script_reader::read_sbatch_directives("#SBATCH --comment=x y\n").arguments,
            (std::vector<std::string>{"--comment=x", "y"}));
  EXPECT_NE(script_reader::read_sbatch_directives("#SBATCH hetjob\n").error, "");
  EXPECT_NE(script_reader::read_sbatch_directives("#SBATCH :x\n").error, "");
}

TEST(JobScriptQuoting, AProgramArgumentWithANewlineStaysInTheOneSrunCommand) {
  auto request = request_for(default_submit_settings(), {"train.py", "x\nsrun evil", "$HOME", "it's"});
  std::string script = job_script(request);
  auto shell = script_reader::read_shell_commands(script);
  ASSERT_EQ(shell.error, "");
  // One command starts the step: the step guard, with srun after its "--".
  std::size_t steps = 0;
  for (const auto& command : shell.commands) {
    const auto& words = command.words;
    if (words.front() == "srun") ++steps;
    if (words.size() > 5 && words[1] == "__run-step" && words[4] == "--" && words[5] == "srun") ++steps;
  }
  EXPECT_EQ(steps, 1u) << script;
  ASSERT_FALSE(shell.commands.empty());
  const auto& words = shell.commands.back().words;
  ASSERT_GE(words.size(), 3u);
  EXPECT_EQ(std::vector<std::string>(words.end() - 3, words.end()),
            (std::vector<std::string>{"x\nsrun evil", "$HOME", "it's"}));

  // And bash itself agrees: srun (a stand-in here) gets them intact.
  const std::string folder = ::testing::TempDir() + "dlaunch_newline_argument_test";
  std::filesystem::remove_all(folder);
  std::filesystem::create_directories(folder);
  auto in_folder = make_job_request(default_submit_settings(), {"train.py", "x\nsrun evil", "$HOME"},
                                    kDlaunch, folder, "t");
  write_secret_file(*in_folder.token_file, rendezvous::generate_token());
  std::string output = run_script(folder, job_script(in_folder), "SLURM_JOB_ID=7");
  EXPECT_NE(output.find("arg=train.py\narg=x\nsrun evil\narg=$HOME\n"), std::string::npos) << output;
  EXPECT_EQ(output.find("command not found"), std::string::npos) << output;
  std::filesystem::remove_all(folder);
}

// --signal and --requeue as flags give them: the forms sbatch takes, and the
// refusals with what to do instead.
namespace from_flags {

using test_support::error_of;
using test_support::request_for;
using test_support::signal_error;
using test_support::with;

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

TEST(SubmitOptions, SpareAndMinNodeRefusals) {
  std::string task = error_of(with({{"spare-nodes", std::int64_t{1}}, {"launch", std::string("task")}}));
  EXPECT_NE(task.find("spare-nodes (from --spare-nodes) needs --launch node"), std::string::npos) << task;
  EXPECT_EQ(error_of(with({{"spare-nodes", std::int64_t{0}}, {"launch", std::string("task")}})), "no error");

  std::string above = error_of(with({{"nodes", std::int64_t{2}}, {"min-nodes", std::int64_t{3}}}));
  EXPECT_NE(above.find("min-nodes 3 (from --min-nodes) must be at most nodes (2)"), std::string::npos)
      << above;
  EXPECT_EQ(error_of(with({{"nodes", std::int64_t{2}}, {"min-nodes", std::int64_t{2}}})), "no error");
  EXPECT_NE(error_of(with({{"spare-nodes", std::int64_t{-1}}})).find("spare-nodes"), std::string::npos);
}

}  // namespace from_flags

// --setup, --srun-arg, and job arrays (--sweep, a raw --array).
namespace arrays_and_setup {

using test_support::error_of;
using test_support::input_error_of;

SubmitSettings sweep_2x2() {
  return with({{"sweep", std::vector<std::string>{"lr=0.1,0.01", "bs=32,64"}}});
}

TEST(JobScriptSetup, SetupLinesRunBeforeSrunAndSrunArgsReachTheStep) {
  auto request = request_for(with({{"setup", std::vector<std::string>{"module load cuda/12", "source 'my venv'/bin/activate"}},
                                   {"srun-arg", std::vector<std::string>{"--comment=lr sweep #1", "--export=ALL"}}}));
  EXPECT_EQ(job_script(request),
            std::string("#!/bin/bash\n"
                        "#SBATCH --job-name=train\n"
                        "#SBATCH --nodes=1\n"
                        "#SBATCH --ntasks-per-node=1\n"
                        "#SBATCH --gpus-per-node=1\n"
                        "#SBATCH --cpus-per-task=1\n"
                        "#SBATCH --output=/out/20261202_120000/slurm-%j.log\n"
                        "#SBATCH --open-mode=append\n"
                        "\n"
                        "# Written by dlaunch submit. Every node runs dlaunch, which derives nodes,\n"
                        "# node rank, GPUs, master address and port from the Slurm step.\n"
                        "export TIMESTAMP=20261202_120000\n"
                        "export OUTPUT_DIR=/out/20261202_120000\n") +
                kLogDirAndToken +
                "# --setup: run before the step; srun passes the environment they leave to every node.\n"
                "module load cuda/12\n"
                "source 'my venv'/bin/activate\n" +
                kStepGuard +
                "srun --nodes=1 --ntasks-per-node=1 --gpus-per-node=1 --cpus-per-task=1 --wait=60 "
                "'--comment=lr sweep #1' --export=ALL "
                "/opt/dlaunch run --log-dir \"$log_dir\" " + kVerdictOptions + " -- train.py\n");
}

TEST(JobScriptSetup, ASrunArgNamedLikeDlaunchsOptionsIsLeftAsItIs) {
  // The script's "$log_dir" replaces dlaunch run's --log-dir, never an srun-arg's word.
  auto request = request_for(with({{"srun-arg", std::vector<std::string>{"--log-dir", "/x"}}}));
  EXPECT_NE(job_script(request).find("--wait=60 --log-dir /x /opt/dlaunch run --log-dir \"$log_dir\" " +
                                     std::string(kVerdictOptions) + " -- train.py\n"),
            std::string::npos)
      << job_script(request);
}

TEST(JobScriptSetup, SrunModeRunsTheSetupLinesHereThenExecsSrun) {
  auto request = request_for(with({{"srun", true},
                                   {"setup", std::vector<std::string>{"export FOO=bar"}},
                                   {"srun-arg", std::vector<std::string>{"--export=ALL"}}}));
  std::vector<std::string> srun = srun_job_command(request);
  ASSERT_NE(std::find(srun.begin(), srun.end(), "--export=ALL"), srun.end());
  EXPECT_LT(std::find(srun.begin(), srun.end(), "--export=ALL"), std::find(srun.begin(), srun.end(), "/opt/dlaunch"));
  EXPECT_EQ(foreground_command(request),
            (std::vector<std::string>{"/bin/bash", "-c",
                                      "# --setup: run before the step; srun passes the environment they leave "
                                      "to every node.\nexport FOO=bar\nexec /opt/dlaunch __run-step "
                                      "/out/20261202_120000/exit_code 35 --foreground -- " +
                                          util::shell_join(srun)}));
  // Without setup lines the step guard runs itself.
  EXPECT_EQ(foreground_command(request_for(with({{"srun", true}}))).front(), "/opt/dlaunch");
}

TEST(JobScriptSetup, ControlCharactersInSetupLinesAndSrunArgsAreRefused) {
  for (const char* name : {"setup", "srun-arg", "sweep"}) {
    EXPECT_TRUE(reaches_script_text(name)) << name;
    std::string message = input_error_of(
        [&] { request_for(with_from(name, std::vector<std::string>{"a=1\nrm -rf ~"}, "--flag")); });
    EXPECT_NE(message.find(std::string(name) + " (from --flag) contains a newline (\\n) at character 4"),
              std::string::npos)
        << message;
  }
  std::string empty = input_error_of([] { request_for(with_from("srun-arg", std::vector<std::string>{""}, "--srun-arg")); });
  EXPECT_NE(empty.find("srun-arg (from --srun-arg) holds an empty value; srun would take it for the program"),
            std::string::npos)
      << empty;
  // An empty setup line is only an empty line.
  EXPECT_EQ(error_of(with({{"setup", std::vector<std::string>{""}}})), "no error");
}

TEST(JobScriptArray, ASweepIsOneArrayWhoseTasksPickTheirArgumentsAndFolders) {
  auto settings = sweep_2x2();
  settings.set("max-parallel", std::int64_t{2}, "--max-parallel");
  EXPECT_EQ(job_script(request_for(settings)),
            std::string("#!/bin/bash\n"
                        "#SBATCH --job-name=train\n"
                        "#SBATCH --nodes=1\n"
                        "#SBATCH --ntasks-per-node=1\n"
                        "#SBATCH --gpus-per-node=1\n"
                        "#SBATCH --cpus-per-task=1\n"
                        "#SBATCH --array=0-3%2\n"
                        "#SBATCH --output=/out/20261202_120000/task_%a/slurm-%A_%a.log\n"
                        "#SBATCH --open-mode=append\n"
                        "\n"
                        "# Written by dlaunch submit. Every node runs dlaunch, which derives nodes,\n"
                        "# node rank, GPUs, master address and port from the Slurm step.\n"
                        "export TIMESTAMP=20261202_120000\n"
                        "# A job array: task_<i>/ holds task i's Slurm log, worker logs, config.json and exit code.\n"
                        "task_dir=/out/20261202_120000/task_\"$SLURM_ARRAY_TASK_ID\"\n"
                        "export OUTPUT_DIR=\"$task_dir\"\n"
                        "# The sweep's values of this task, added to the program's arguments.\n"
                        "case \"$SLURM_ARRAY_TASK_ID\" in\n"
                        "  0) task_args=(--lr=0.1 --bs=32) ;;\n"
                        "  1) task_args=(--lr=0.1 --bs=64) ;;\n"
                        "  2) task_args=(--lr=0.01 --bs=32) ;;\n"
                        "  3) task_args=(--lr=0.01 --bs=64) ;;\n"
                        "  *) echo \"dlaunch: array task $SLURM_ARRAY_TASK_ID is none of this sweep's\" >&2; exit 1 ;;\n"
                        "esac\n"
                        "# Worker logs: logs/ on the first run; logs/requeue_N/ when Slurm started the job\n"
                        "# again after N requeues (SLURM_RESTART_COUNT=N), so no run overwrites another's.\n"
                        "log_dir=\"$task_dir\"/logs\n"
                        "if [ \"${SLURM_RESTART_COUNT:-0}\" != 0 ]; then\n"
                        "  log_dir=\"$task_dir\"/logs/requeue_\"$SLURM_RESTART_COUNT\"\n"
                        "  echo \"dlaunch: job $SLURM_JOB_ID started again after requeue $SLURM_RESTART_COUNT; "
                        "worker logs in $log_dir\"\n"
                        "fi\n"
                        "# The rendezvous secret every node's dlaunch run proves (the file is readable by you only).\n"
                        "DLAUNCH_RDZV_TOKEN=$(cat /out/20261202_120000/rdzv.token) || exit 1\n"
                        "export DLAUNCH_RDZV_TOKEN\n"
                        "# The step ends when srun does, or shortly after the job's verdict is in: a lost\n"
                        "# node's task (frozen, cut off, powered off) never reports to srun.\n"
                        "/opt/dlaunch __run-step \"$task_dir\"/exit_code 35 -- "
                        "srun --nodes=1 --ntasks-per-node=1 --gpus-per-node=1 --cpus-per-task=1 --wait=60 "
                        "/opt/dlaunch run --log-dir \"$log_dir\" --exit-code-file \"$task_dir\"/exit_code "
                        "--end-job-after 45 -- train.py \"${task_args[@]}\"\n"));
}

TEST(JobScriptArray, SweepValuesAreQuotedForTheShell) {
  auto request = request_for(with({{"sweep", std::vector<std::string>{"name=a b,$(x),it's"}}}));
  std::string script = job_script(request);
  EXPECT_NE(script.find("  0) task_args=('--name=a b') ;;\n"), std::string::npos) << script;
  EXPECT_NE(script.find("  1) task_args=('--name=$(x)') ;;\n"), std::string::npos) << script;
  EXPECT_NE(script.find("  2) task_args=('--name=it'\\''s') ;;\n"), std::string::npos) << script;
}

TEST(JobScriptArray, EachTaskRunsWithItsOwnArgumentsFolderAndLogs) {
  const std::string folder = ::testing::TempDir() + "dlaunch array 'script' test";
  std::filesystem::remove_all(folder);
  std::filesystem::create_directories(folder);
  auto request = make_job_request(sweep_2x2(), {"train.py", "--epochs", "3"}, kDlaunch, folder, "t");
  write_secret_file(*request.token_file, rendezvous::generate_token());
  const std::string script = job_script(request);
  std::string task2 = run_script(folder, script, "SLURM_JOB_ID=9 SLURM_ARRAY_TASK_ID=2");
  EXPECT_NE(task2.find("arg=--log-dir\narg=" + folder + "/task_2/logs\n"), std::string::npos) << task2;
  EXPECT_NE(task2.find("arg=train.py\narg=--epochs\narg=3\narg=--lr=0.01\narg=--bs=32\n"), std::string::npos) << task2;
  std::string requeued = run_script(folder, script, "SLURM_JOB_ID=9 SLURM_ARRAY_TASK_ID=3 SLURM_RESTART_COUNT=1");
  EXPECT_NE(requeued.find("arg=" + folder + "/task_3/logs/requeue_1\n"), std::string::npos) << requeued;
  EXPECT_NE(requeued.find("arg=--lr=0.01\narg=--bs=64\n"), std::string::npos) << requeued;
  // A task the sweep does not know stops before srun.
  std::string stray = run_script(folder, script, "SLURM_JOB_ID=9 SLURM_ARRAY_TASK_ID=7");
  EXPECT_EQ(stray.find("arg="), std::string::npos) << stray;
  EXPECT_NE(stray.find("array task 7 is none of this sweep's"), std::string::npos) << stray;
  std::filesystem::remove_all(folder);
}

TEST(JobScriptArray, ATaskThatOutlivesANodeKeepsItsExitCodeInItsFolder) {
  const std::string folder = ::testing::TempDir() + "dlaunch array exit code test";
  std::filesystem::remove_all(folder);
  std::filesystem::create_directories(folder + "/task_1");
  auto settings = sweep_2x2();
  settings.set("nodes", std::int64_t{2}, "--nodes");
  settings.set("spare-nodes", std::int64_t{1}, "--spare-nodes");
  auto request = make_job_request(settings, {"train.py"}, kDlaunch, folder, "t");
  write_secret_file(*request.token_file, rendezvous::generate_token());
  std::string script = job_script(request);
  EXPECT_NE(script.find("--exit-code-file \"$task_dir\"/exit_code --end-job-after 45 -- train.py "
                        "\"${task_args[@]}\"\n"),
            std::string::npos)
      << script;
  EXPECT_NE(script.find("__run-step \"$task_dir\"/exit_code 35 -- srun "), std::string::npos) << script;
  EXPECT_EQ(script_status(request, writes_verdict(4) + "; exit 137", "SLURM_ARRAY_TASK_ID=1"), 4);
  EXPECT_TRUE(std::filesystem::exists(folder + "/task_1/exit_code"));
  EXPECT_FALSE(std::filesystem::exists(folder + "/exit_code"));
  std::filesystem::remove_all(folder);
}

// Each task is its own job to Slurm, requeued alone: its record of benched
// hosts is in its own folder.
TEST(JobScriptArray, ARequeuedTaskKeepsItsBenchRecordInItsFolder) {
  auto settings = sweep_2x2();
  settings.set("signal", std::string("USR1"), "--signal");
  settings.set("requeue", true, "--requeue");
  std::string script = job_script(request_for(settings));
  EXPECT_NE(script.find("--requeue --bench-record \"$task_dir\"/bench-record.json --exit-code-file"),
            std::string::npos)
      << script;
}

TEST(JobScriptArray, ARawArrayGetsTaskFoldersWithoutValues) {
  auto request = request_for(with({{"sbatch-arg", std::vector<std::string>{"--reservation=r1", "--array=1,3-4%1"}}}));
  std::string script = job_script(request);
  auto sbatch = script_reader::read_sbatch_directives(script);
  EXPECT_EQ(sbatch.arguments, (std::vector<std::string>{
                                  "--job-name=train", "--nodes=1", "--ntasks-per-node=1", "--gpus-per-node=1",
                                  "--cpus-per-task=1",
                                  "--array=1,3-4%1", "--output=/out/20261202_120000/task_%a/slurm-%A_%a.log",
                                  "--open-mode=append", "--reservation=r1"}));
  EXPECT_NE(script.find("export OUTPUT_DIR=\"$task_dir\"\n"), std::string::npos) << script;
  EXPECT_EQ(script.find("case "), std::string::npos) << script;
  EXPECT_EQ(script.find("task_args"), std::string::npos) << script;
}

TEST(JobScriptArray, TaskLaunchSweepsToo) {
  auto request = request_for(with({{"launch", std::string("task")}, {"sweep", std::vector<std::string>{"lr=1,2"}}}));
  std::string script = job_script(request);
  EXPECT_NE(script.find("/opt/dlaunch exec -- train.py \"${task_args[@]}\"\n"), std::string::npos) << script;
  EXPECT_NE(script.find("  1) task_args=(--lr=2) ;;\n"), std::string::npos) << script;
}

}  // namespace arrays_and_setup

}  // namespace
}  // namespace dlaunch::submit

namespace dlaunch::submit {
namespace {

// --gate: every node's dlaunch run gets it, and the script copies the
// hosts node 0 benched next to job.sbatch, keeping the step's exit status.
TEST(JobScriptGate, TheBenchedHostsAreCopiedForExcludeAndTheStatusKept) {
  const std::string folder = ::testing::TempDir() + "dlaunch gate 'benched' test";
  std::filesystem::remove_all(folder);
  std::filesystem::create_directories(folder);
  auto request = make_job_request(with({{"nodes", std::int64_t{2}}, {"gate", true}, {"gate-timeout", std::int64_t{30}}}),
                                  {"train.py"}, kDlaunch, folder, "t");
  write_secret_file(*request.token_file, rendezvous::generate_token());
  std::string script = job_script(request);
  EXPECT_NE(script.find("--gate-timeout 30 --gate"), std::string::npos) << script;
  // srun stands in for the step: node 0 wrote logs/gate/benched-hosts.
  const std::string writes_benched =
      "while [ $# -gt 0 ]; do [ \"$1\" = --log-dir ] && log_dir=$2; shift; done; "
      "mkdir -p \"$log_dir/gate\"; echo node3 >\"$log_dir/gate/benched-hosts\"; exit 4";
  EXPECT_EQ(script_status(request, writes_benched), 4);
  std::ifstream copied(folder + "/benched-hosts");
  std::string hosts;
  std::getline(copied, hosts);
  EXPECT_EQ(hosts, "node3");
  std::filesystem::remove_all(folder);
}

TEST(JobScriptHang, TheStartupTimeoutReachesTheLaunchersOnlyBesideALongerHangTimeout) {
  using test_support::input_error_of;
  std::string script =
      job_script(request_for(with({{"hang-timeout", std::int64_t{60}}, {"startup-timeout", std::int64_t{900}}})));
  EXPECT_NE(script.find("--hang-timeout 60 --startup-timeout 900"), std::string::npos) << script;
  EXPECT_NE(input_error_of([] { request_for(with({{"startup-timeout", std::int64_t{900}}})); })
                .find("it needs hang-timeout, and must be longer than it (0)"),
            std::string::npos);
  EXPECT_NE(input_error_of([] {
              request_for(with({{"hang-timeout", std::int64_t{60}}, {"startup-timeout", std::int64_t{30}}}));
            }).find("must be longer than it (60)"),
            std::string::npos);
}

TEST(JobScriptGate, GateTimeoutNeedsTheGateAndTheGateNeedsNodeLaunch) {
  using test_support::input_error_of;
  EXPECT_NE(input_error_of([] { request_for(with({{"gate-timeout", std::int64_t{30}}})); }).find("needs gate"),
            std::string::npos);
  EXPECT_NE(input_error_of([] { request_for(with({{"gate", true}, {"launch", std::string("task")}})); })
                .find("needs --launch node"),
            std::string::npos);
}

}  // namespace
}  // namespace dlaunch::submit

namespace dlaunch::submit {
namespace {

// --heartbeat-timeout (and heartbeat_timeout in dlaunch.toml): how soon a
// silent node (frozen, cut off, powered off) is lost, on every launcher.
TEST(JobScriptHeartbeat, TheHeartbeatTimeoutReachesEveryLauncher) {
  auto request = request_for(with({{"nodes", std::int64_t{2}}, {"heartbeat-timeout", std::int64_t{10}}}));
  EXPECT_NE(job_script(request).find("--end-job-after 45 --heartbeat-timeout 10 -- train.py"), std::string::npos)
      << job_script(request);
  EXPECT_NE(util::shell_join(srun_job_command(request)).find("--heartbeat-timeout 10 -- train.py"),
            std::string::npos);
}

TEST(JobScriptHeartbeat, AHeartbeatTimeoutTheLaunchersWouldRefuseIsRefusedNow) {
  using test_support::input_error_of;
  std::string zero = input_error_of([] { request_for(with({{"heartbeat-timeout", std::int64_t{0}}})); });
  EXPECT_NE(zero.find("heartbeat-timeout must be from 1 to 604800, got 0 (from test)"), std::string::npos) << zero;
  std::string task = input_error_of(
      [] { request_for(with({{"heartbeat-timeout", std::int64_t{5}}, {"launch", std::string("task")}})); });
  EXPECT_NE(task.find("heartbeat-timeout (from test) needs --launch node"), std::string::npos) << task;
}

}  // namespace
}  // namespace dlaunch::submit
