// What a Slurm job step tells its processes through SLURM_* variables.
//
// Pure: it reads an Environment and never runs scontrol, so the launcher
// works on nodes where the Slurm client is not installed and every
// combination of variables can be unit-tested.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "util/environment.h"
#include "util/sourced.h"

namespace dlaunch::slurm {

// Slurm's highest id for a step srun starts (slurm.h's
// SLURM_MAX_NORMAL_STEP_ID); the ids above it name the steps Slurm runs
// itself: the batch script (0xfffffffb, 0xfffffffe before Slurm 20.11),
// the extern step, salloc's interactive step.
inline constexpr std::uint64_t kMaxNormalStepId = 0xfffffff0;

struct SlurmContext {
  std::string job_id;                             // SLURM_JOB_ID
  // SLURM_STEP_ID (or its older name SLURM_STEPID) of a step srun started;
  // absent in the batch script and Slurm's other steps of its own.
  std::optional<std::uint64_t> step_id;
  std::optional<util::Sourced<int>> num_nodes;          // SLURM_STEP_NUM_NODES, else SLURM_JOB_NUM_NODES
  std::optional<util::Sourced<int>> node_id;            // SLURM_NODEID
  std::optional<util::Sourced<std::string>> nodelist;   // SLURM_STEP_NODELIST, else SLURM_JOB_NODELIST
  std::optional<util::Sourced<int>> gpus_on_node;       // SLURM_GPUS_ON_NODE, else counted device lists
  // The first port Slurm reserved for the step (SLURM_STEP_RESV_PORTS,
  // "12000-12004" or "12000,12003"), the same on every node of the step.
  std::optional<int> reserved_port;

  // Inside a step srun started: one task on each of the step's nodes
  // (or more, when asked), each with its own SLURM_NODEID.
  bool in_srun_step() const { return step_id.has_value(); }
};

// The Slurm context of ENVIRONMENT, or nullopt when not inside a Slurm job
// step (SLURM_JOB_ID and SLURM_NODEID must both be set). Throws InputError
// naming the variable when a SLURM_* value is malformed.
std::optional<SlurmContext> read_slurm_context(const util::Environment& environment);

// A job of several nodes that this process runs in outside any srun step:
// the batch script of `sbatch -N 2`, an salloc shell, salloc's interactive
// step. One process runs here, so one launcher would start.
struct OutsideStep {
  std::string job_id;                  // SLURM_JOB_ID
  util::Sourced<int> job_nodes;        // SLURM_JOB_NUM_NODES, else SLURM_NNODES: more than 1
  std::string why;                     // "SLURM_STEP_ID is unset", "SLURM_STEP_ID=4294967291 ..."
};

// The job ENVIRONMENT names when it is one of several nodes and no srun
// step's (SLURM_STEP_ID unset, or one of Slurm's own steps); nullopt
// otherwise: no job, a job of one node, or a step srun started. Needs no
// SLURM_NODEID (salloc's shell has none). Throws InputError naming a
// malformed variable.
std::optional<OutsideStep> outside_step_of_multinode_job(const util::Environment& environment);

// How many devices a list such as CUDA_VISIBLE_DEVICES="0,1,3" or
// "GPU-8f2c...,GPU-1a3b..." names. Slurm writes "NoDevFiles" or an empty
// value when no GPU was allocated: those count as zero.
int count_device_list(const std::string& list);

// The first host of the step's node list, expanded by dlaunch's own
// hostlist parser (not scontrol). nullopt when no list is known.
std::optional<util::Sourced<std::string>> first_node(const SlurmContext& context);

}  // namespace dlaunch::slurm
