// The plan for one node's workers: argv, environment and files of each.
//
// Pure: it computes what torchrun would give each worker from the resolved
// configuration and the agreed world, and touches nothing, so the
// environment contract is unit-tested without starting a process.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "launch/launch_config.h"
#include "util/environment.h"
#include "wire/world.h"

namespace dlaunch::launch {

struct WorkerSpec {
  int global_rank = 0;
  int local_rank = 0;
  std::vector<std::string> argv;
  util::Environment environment;
  std::string prefix;                  // console line prefix, e.g. "[rank3]:"
  bool stdout_to_console = true;
  bool stderr_to_console = true;
  std::optional<std::string> stdout_file;
  std::optional<std::string> stderr_file;
  std::string error_file;              // TORCHELASTIC_ERROR_FILE
  std::string log_folder;              // the folder holding this worker's files
};

struct WorkerPlan {
  std::vector<WorkerSpec> workers;
  std::vector<std::string> notices;  // one-line notes for the user (OMP_NUM_THREADS, ...)
};

// LOG_ROOT is the folder for this run's per-worker files (the --log-dir, or
// a temporary folder that at least holds the error files). Each worker's
// TORCHELASTIC_RESTART_COUNT is BASE's SLURM_RESTART_COUNT (the times Slurm
// started the job again) plus WORLD's round; the workers do not get the
// rendezvous secret ($DLAUNCH_RDZV_TOKEN). Throws InputError for a
// SLURM_RESTART_COUNT that is not a whole number.
WorkerPlan plan_workers(const LaunchConfig& config, const rendezvous::World& world, int slot,
                        const util::Environment& base, const std::string& log_root, const std::string& host);

// Expands a prefix template's {rank}, {local_rank}, {node_rank}, {host} and {role}.
std::string expand_prefix(const std::string& templ, int rank, int local_rank, int node_rank,
                          const std::string& host, const std::string& role);

}  // namespace dlaunch::launch
