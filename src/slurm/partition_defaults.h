// What a Slurm partition gives each GPU by default: its DefCpuPerGPU, read
// from `scontrol show partition -o` (run here and nowhere else), so that
// dlaunch submit can ask for the CPUs per worker the site meant.
//
// The answer is a nicety, never a need: a machine without Slurm (a dry run
// on a laptop), a controller that is down or slow, or a partition without
// the default all give nullopt, and dlaunch submit falls back to its own.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace dlaunch::slurm {

// How long scontrol may take: far less than status's patience, since
// dlaunch submit only asks for a default and has one of its own.
inline constexpr std::chrono::seconds kPartitionQueryPatience{5};

// The DefCpuPerGPU of PARTITIONS ("gpu", or sbatch's list "gpu,debug": the
// smallest, so the request fits whichever Slurm picks; empty: the default
// partition, Default=YES) in OUTPUT, the records of `scontrol show
// partition -o`. nullopt when a partition named is not there or has none.
// Pure.
std::optional<int> default_cpus_per_gpu(std::string_view output, const std::string& partitions);

// Asks scontrol (bounded by PATIENCE, through coreutils' timeout), then
// default_cpus_per_gpu(). nullopt when scontrol or timeout is missing,
// fails, or does not answer in time.
std::optional<int> query_default_cpus_per_gpu(const std::string& partitions,
                                              std::chrono::seconds patience = kPartitionQueryPatience);

}  // namespace dlaunch::slurm
