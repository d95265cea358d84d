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

struct SlurmContext {
  std::string job_id;                             // SLURM_JOB_ID
  std::optional<std::uint64_t> step_id;           // SLURM_STEP_ID; absent in the batch step
  std::optional<util::Sourced<int>> num_nodes;          // SLURM_STEP_NUM_NODES, else SLURM_JOB_NUM_NODES
  std::optional<util::Sourced<int>> node_id;            // SLURM_NODEID
  std::optional<util::Sourced<std::string>> nodelist;   // SLURM_STEP_NODELIST, else SLURM_JOB_NODELIST
  std::optional<util::Sourced<int>> gpus_on_node;       // SLURM_GPUS_ON_NODE, else counted device lists
  // The first port Slurm reserved for the step (SLURM_STEP_RESV_PORTS,
  // "12000-12004" or "12000,12003"), the same on every node of the step.
  std::optional<int> reserved_port;

  // True in the batch step of a multi-node job, where only one launcher runs
  // and waiting for the other nodes would hang.
  bool in_batch_step_of_multinode_job() const;
};

// The Slurm context of ENVIRONMENT, or nullopt when not inside a Slurm job
// step (SLURM_JOB_ID and SLURM_NODEID must both be set). Throws InputError
// naming the variable when a SLURM_* value is malformed.
std::optional<SlurmContext> read_slurm_context(const util::Environment& environment);

// How many devices a list such as CUDA_VISIBLE_DEVICES="0,1,3" or
// "GPU-8f2c...,GPU-1a3b..." names. Slurm writes "NoDevFiles" or an empty
// value when no GPU was allocated: those count as zero.
int count_device_list(const std::string& list);

// The first host of the step's node list, expanded by dlaunch's own
// hostlist parser (not scontrol). nullopt when no list is known.
std::optional<util::Sourced<std::string>> first_node(const SlurmContext& context);

}  // namespace dlaunch::slurm
