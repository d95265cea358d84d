// What SkyPilot tells the run commands of a task on each of its nodes
// (docs.skypilot.co, "Environment variables and secrets"):
//   SKYPILOT_NODE_IPS           one IP address a line, node 0's first
//   SKYPILOT_NODE_RANK          this node's place, 0 to SKYPILOT_NUM_NODES - 1
//   SKYPILOT_NUM_NODES          the task's nodes
//   SKYPILOT_NUM_GPUS_PER_NODE  each node's GPUs (0 on nodes without)
// Pure: read from an Environment, checked as strictly as SLURM_* values.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "slurm/slurm_context.h"
#include "util/environment.h"
#include "util/sourced.h"

namespace dlaunch::launch {

struct SkyPilotContext {
  util::Sourced<int> num_nodes;                     // SKYPILOT_NUM_NODES
  util::Sourced<int> node_rank;                     // SKYPILOT_NODE_RANK
  std::vector<std::string> node_ips;                // SKYPILOT_NODE_IPS, node 0's first
  util::Sourced<std::string> head_ip;               // the first of them
  std::optional<util::Sourced<int>> gpus_per_node;  // SKYPILOT_NUM_GPUS_PER_NODE
};

// The SkyPilot context of ENVIRONMENT, or nullopt when none of
// SKYPILOT_NODE_IPS, SKYPILOT_NODE_RANK and SKYPILOT_NUM_NODES is set.
// Throws InputError naming the variable when one of the three is missing
// or malformed, when the IPs are not SKYPILOT_NUM_NODES or the rank is out
// of range.
std::optional<SkyPilotContext> read_skypilot_context(const util::Environment& environment);

// SkyPilot's context when it places this launcher: a step srun started
// comes first (SLURM, whose SLURM_NODEID places each task), then SkyPilot;
// outside any step Slurm places nothing, so SkyPilot's variables count.
std::optional<SkyPilotContext> skypilot_placement(const util::Environment& environment,
                                                  const std::optional<slurm::SlurmContext>& slurm);

}  // namespace dlaunch::launch
