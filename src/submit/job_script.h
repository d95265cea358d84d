// What `dlaunch submit` hands to Slurm: the job script and the commands.
//
// Pure: a JobRequest in, text and argv out, so --dry-run output is
// unit-tested against expected scripts for many option combinations.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "submit/container_step.h"
#include "submit/job_array.h"
#include "submit/submit_settings.h"
#include "util/shell_words.h"

namespace dlaunch::submit {

enum class LaunchMode { kNode, kTask };

// sbatch's --signal=[R:]SIG@SECONDS, limited to what dlaunch run can use as
// a preemption warning: USR1 or USR2, sent to the job steps (never B:).
struct PreemptSignal {
  std::string name = "USR1";  // "USR1" or "USR2", for #SBATCH and --preempt-signal
  int seconds = 60;           // before the end time; sbatch's default is 60
  bool reservation = false;   // "R:": may overlap a reservation with MaxStartDelay

  // "USR1@60", "R:USR2@300": the value of sbatch's --signal=.
  std::string sbatch_value() const;
};

// Parses TEXT ("USR1@120", "SIGUSR2", "10@90", "R:USR1@600") given by
// SOURCE. Throws InputError naming SOURCE for B: (it signals only the batch
// shell, which dlaunch run never sees), other signals, and times outside
// 0..65535.
PreemptSignal parse_preempt_signal(const std::string& text, const std::string& source);

// In node mode srun ends the tasks still running this long (plus the
// launchers' --shutdown-timeout) after the first one exited (srun --wait).
inline constexpr int kStragglerMarginSeconds = 30;

// The file in a submission folder that holds the job's rendezvous secret.
inline constexpr const char* kTokenFileName = "rdzv.token";

// The launcher that speaks for the job writes the job's exit code here (in
// the submission folder, or an array task's) as soon as the verdict is in.
// The job script's step guard (`dlaunch __run-step`, step_guard.h) ends the
// step by it and exits with it: srun's own code may be a lost node's task's,
// and srun may never return when that node froze or lost its power.
inline constexpr const char* kExitCodeFileName = "exit_code";

// With --requeue, node 0 keeps the hosts dlaunch benched here (in the
// submission folder, or an array task's), with the cooldown each is
// excluded for, and the requeued job leaves them out (slurm/bench_record.h).
inline constexpr const char* kBenchRecordFileName = "bench-record.json";

// Once the verdict is in, the step guard gives srun the launchers'
// --shutdown-timeout plus this many seconds to end by itself.
inline constexpr int kStepGraceMarginSeconds = 5;

struct JobRequest {
  int nodes = 1;        // the training nodes
  int spare_nodes = 0;  // allocated beyond them, standing by (--launch node only)
  int min_nodes = 1;    // --min-nodes: the job goes on with fewer nodes, down to this

  // The job goes on when a node is lost (spares, or fewer nodes allowed):
  // the step must outlive a task, and the job's code comes from dlaunch.
  bool outlives_a_node() const {
    return launch == LaunchMode::kNode && (spare_nodes > 0 || min_nodes < nodes);
  }
  bool gate = false;  // --gate: the job script copies the benched hosts up for --exclude
  int gpus_per_node = 1;     // workers per node (resource_request.h)
  bool own_gpu_request = true;  // false: an sbatch-arg asks for the GPUs, not dlaunch
  // CPUs per worker dlaunch asks for; nullopt: none (an sbatch-arg asks, or --exclusive).
  std::optional<int> cpus_per_worker;
  std::optional<int> step_cpus_per_task;  // the user's sbatch-arg -c N, repeated for the step
  std::optional<std::string> partition, job_name, time, account, qos, constraint, mem;
  bool exclusive = false;
  bool resv_ports = false;  // srun --resv-ports=1: Slurm picks the port, no derivation needed
  std::vector<std::string> sbatch_args;  // without an --array option: that is in `array`
  std::vector<std::string> srun_args;    // --srun-arg: for the srun that starts the step
  // --setup: shell lines run before srun (on the batch host; with --srun, here).
  std::vector<std::string> setup_lines;
  // A job array (--sweep, or --array among the sbatch args): one folder per task.
  std::optional<JobArray> array;
  LaunchMode launch = LaunchMode::kNode;
  std::vector<std::string> run_args;  // dlaunch run options for every node
  std::optional<PreemptSignal> signal;  // --signal: forwarded by dlaunch run as --preempt-signal
  bool requeue = false;                 // --requeue: node 0 requeues the job after the signal
  // Where the job reads its rendezvous secret from (SUBMISSION_DIR/rdzv.token);
  // nullopt in --launch task mode, which has no rendezvous.
  std::optional<std::string> token_file;
  std::string dlaunch_path;           // the dlaunch the nodes run (shared file system)
  // --container-image: the step runs in the image, with the dlaunch there
  // (container_step.h); srun_args then hold its srun options.
  std::optional<ContainerStep> container;
  std::vector<std::string> command;   // PROGRAM [ARGS...]
  std::string submission_dir;         // absolute: OUTPUT_DIR of the job
  std::string timestamp;              // TIMESTAMP of the job
};

// Checks and converts merged SETTINGS. Throws InputError naming the
// setting and its source for a control character in any value that reaches
// the script or in SUBMISSION_DIR (script_value.h), values out of range, a
// bad --signal, and --requeue without --signal, with --srun or with --launch
// task, and GPU or CPU requests that disagree (resource_request.h), and a
// container step that cannot work (container_step.h).
// Without --job-name the job is named after the script or module the
// command runs (job_name.h).
JobRequest make_job_request(const SubmitSettings& settings, std::vector<std::string> command,
                            std::string dlaunch_path, std::string submission_dir,
                            std::string timestamp);

// The sbatch script: #SBATCH lines (one option each, quoted for sbatch
// where needed: sbatch_quote), the exported TIMESTAMP/OUTPUT_DIR, the
// worker log folder (logs/, or logs/requeue_N/ when Slurm started the job
// again: SLURM_RESTART_COUNT=N), the rendezvous secret read from the token
// file (never the secret itself), the --setup lines, and the srun line that
// starts dlaunch on every node (or every task). For a job array, OUTPUT_DIR,
// the logs and the exit-code file are the task's folder's (task_<i>/, from
// $SLURM_ARRAY_TASK_ID), and a sweep's task picks its arguments in a case
// block.
std::string job_script(const JobRequest& request);

// sbatch SCRIPT_PATH with --parsable, so the job id is all it prints.
std::vector<std::string> sbatch_command(const std::string& script_path);

// The srun command of --srun mode: the same job, in the foreground.
std::vector<std::string> srun_job_command(const JobRequest& request);

// What --srun mode runs: in node mode srun_job_command() under the step
// guard (`dlaunch __run-step FILE GRACE --foreground -- srun ...`), which
// ends it by the job's verdict; behind a bash that runs the --setup lines
// first when there are any.
std::vector<std::string> foreground_command(const JobRequest& request);

// The srun line inside the job script (without the resource options the
// allocation already has); in node mode the script runs it under the step
// guard.
std::vector<std::string> srun_step_command(const JobRequest& request);

// The words after `dlaunch run` (or `dlaunch exec` with --launch task) that
// every node of the batch job gets: dlaunch's own options, REQUEST's
// run_args, "--" and the program. dlaunch submit checks them, as the nodes
// will read them, before sbatch (launch/hand_off_check.h).
std::vector<std::string> node_run_arguments(const JobRequest& request);


}  // namespace dlaunch::submit
