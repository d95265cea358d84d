// A partition's DefCpuPerGPU read from `scontrol show partition -o`.
#include "slurm/partition_defaults.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace dlaunch::slurm {
namespace {

// Three partitions as Slurm 22.05's scontrol prints them with -o (cut).
constexpr const char* kPartitions =
    "PartitionName=debug AllowGroups=ALL Default=YES QoS=N/A DefaultTime=NONE Nodes=node[1-3] "
    "State=UP TotalCPUs=12 TotalNodes=3 JobDefaults=DefCpuPerGPU=2 DefMemPerNode=UNLIMITED "
    "TRES=cpu=12,mem=3G,node=3,billing=12,gres/gpu=12\n"
    "PartitionName=gpu AllowGroups=ALL Default=NO JobDefaults=DefCpuPerGPU=8,DefMemPerGPU=16384 "
    "TRES=cpu=384,node=4,gres/gpu=32\n"
    "PartitionName=plain AllowGroups=ALL Default=NO JobDefaults=(null) TRES=cpu=64,node=2\n";

TEST(PartitionDefaults, TheNamedPartitionsDefault) {
  EXPECT_EQ(default_cpus_per_gpu(kPartitions, "gpu"), 8);
  EXPECT_EQ(default_cpus_per_gpu(kPartitions, "debug"), 2);
}

TEST(PartitionDefaults, TheDefaultPartitionWhenNoneIsNamed) {
  EXPECT_EQ(default_cpus_per_gpu(kPartitions, ""), 2);
}

TEST(PartitionDefaults, TheSmallestOfSeveralSoTheRequestFitsEach) {
  EXPECT_EQ(default_cpus_per_gpu(kPartitions, "gpu,debug"), 2);
  EXPECT_EQ(default_cpus_per_gpu(kPartitions, " gpu , debug "), 2);
}

TEST(PartitionDefaults, NothingWhenAPartitionSaysNothingOrIsNotThere) {
  EXPECT_EQ(default_cpus_per_gpu(kPartitions, "plain"), std::nullopt);
  EXPECT_EQ(default_cpus_per_gpu(kPartitions, "gpu,plain"), std::nullopt);
  EXPECT_EQ(default_cpus_per_gpu(kPartitions, "nosuch"), std::nullopt);
  EXPECT_EQ(default_cpus_per_gpu(kPartitions, "gpu,nosuch"), std::nullopt);
  EXPECT_EQ(default_cpus_per_gpu("", ""), std::nullopt);
  EXPECT_EQ(default_cpus_per_gpu("PartitionName=x Default=YES JobDefaults=DefCpuPerGPU=lots\n", ""), std::nullopt);
  EXPECT_EQ(default_cpus_per_gpu("PartitionName=x Default=YES JobDefaults=DefCpuPerGPU=0\n", ""), std::nullopt);
}

TEST(PartitionDefaults, NoSlurmHereIsNoAnswerNotAnError) {
  // Neither timeout nor scontrol can be found: a machine without Slurm.
  const char* saved = std::getenv("PATH");
  const std::string path = saved == nullptr ? "" : saved;
  ::setenv("PATH", "/nonexistent", 1);
  auto answer = query_default_cpus_per_gpu("gpu", std::chrono::seconds(2));
  ::setenv("PATH", path.c_str(), 1);
  EXPECT_EQ(answer, std::nullopt);
}

}  // namespace
}  // namespace dlaunch::slurm
