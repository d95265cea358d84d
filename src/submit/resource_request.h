// Which GPUs and CPUs a job asks Slurm for, and who asks: dlaunch, from its
// settings, or the user, through --sbatch-arg.
//
// A GPU request among the sbatch args (--gres=gpu..., --gpus/-G,
// --gpus-per-node, --gpus-per-task, --gpus-per-socket) replaces dlaunch's
// own --gpus-per-node instead of adding to it: both would reach sbatch, and
// Slurm would take them together (gpus-per-node=1 and gres gpu:8). The
// same holds for a CPU request (--cpus-per-task/-c, --cpus-per-gpu,
// --mincpus).
//
// Without one, dlaunch asks for CPUs per worker: --cpus-per-gpu when given,
// else the partition's DefCpuPerGPU when scontrol can say
// (slurm/partition_defaults.h; the submit command asks), else
// kDefaultCpusPerWorker. Without a request Slurm gives a task one CPU, and
// with --launch node the node's one task runs every worker: eight workers
// would share one CPU. With --exclusive the job has every CPU of its nodes,
// and dlaunch asks for none unless --cpus-per-gpu is given.
//
// Pure: settings and sbatch args in, the counts out.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "submit/submit_settings.h"

namespace dlaunch::submit {

// CPUs each worker gets when neither the user nor the partition says.
inline constexpr int kDefaultCpusPerWorker = 1;

// How the source of a cpus-per-gpu value that scontrol gave (the
// partition's DefCpuPerGPU) begins: a default, like the built-in one, that
// an sbatch-arg's CPU request replaces without a word.
inline constexpr const char* kPartitionDefaultSource = "DefCpuPerGPU of the partition";

// A GPU or CPU request found among the sbatch args.
struct SbatchArgRequest {
  std::string option;        // as written, for messages: "--gres=gpu:8", "-G 16"
  std::string name;          // the option's long name: "--gres", "--gpus", "--cpus-per-task"
  std::string value;         // "gpu:a100:8", "16"
  std::optional<int> count;  // the number in it, when it has one: 8 for "gpu:a100:8"
};

// The GPU request among SBATCH_ARGS (the first), if any.
std::optional<SbatchArgRequest> gpu_request_in(const std::vector<std::string>& sbatch_args);

// The CPU request among SBATCH_ARGS (the first), if any.
std::optional<SbatchArgRequest> cpu_request_in(const std::vector<std::string>& sbatch_args);

// The partition named among SBATCH_ARGS (--partition=, -p), if any.
std::optional<std::string> partition_in(const std::vector<std::string>& sbatch_args);

// What the job asks for.
struct Resources {
  // GPUs (so workers) per node: dlaunch's setting, or what the user's
  // sbatch-arg request gives each node when that can be said.
  int gpus_per_node = 1;
  // false: the user's sbatch-arg asks for the GPUs, dlaunch does not.
  bool own_gpu_request = true;
  // CPUs per worker dlaunch asks for; nullopt: none (the user's sbatch-arg
  // asks, or --exclusive without --cpus-per-gpu).
  std::optional<int> cpus_per_worker;
  // The user's --cpus-per-task (-c) for the step too: since Slurm 22.05 a
  // step does not inherit it from the batch job.
  std::optional<int> step_cpus_per_task;
};

// The resources of a job of NODES training nodes with SETTINGS and
// SBATCH_ARGS (one task per GPU when ONE_TASK_PER_GPU, else one per node).
// Throws InputError naming both sources when a setting the user gave
// (--gpus-per-node, --gpus, --cpus-per-gpu) and an sbatch-arg ask for the
// same resource differently, for a --gpus that does not split over the
// nodes, and for --launch task with a GPU request whose count per node
// cannot be read (give --gpus-per-node too).
Resources resources_of(const SubmitSettings& settings, const std::vector<std::string>& sbatch_args, int nodes,
                       bool one_task_per_gpu);

// Throws InputError for an sbatch-arg or srun-arg that sets what dlaunch
// sets itself: the node count (-N, --nodes: nodes plus spares) or the tasks
// per node (--ntasks-per-node, --ntasks, -n), naming both and what to keep.
void refuse_contradicting_layout(const SubmitSettings& settings);

// Whether the CPUs per worker would come from the partition's default:
// no cpus-per-gpu from the user, no CPU request among the sbatch args, no
// --exclusive. Then the submit command asks scontrol.
bool wants_partition_cpu_default(const SubmitSettings& settings);

// Whether the setting NAME has a value the user gave (a flag or the config
// file), not a default (built-in, or the partition's).
bool given_by_user(const SubmitSettings& settings, const std::string& name);

}  // namespace dlaunch::submit
