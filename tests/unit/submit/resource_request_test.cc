// The GPUs and CPUs a job asks for: dlaunch's own request, or the user's in
// --sbatch-arg, which replaces it; CPUs per worker by default.
#include "submit/resource_request.h"

#include <gtest/gtest.h>

#include "../test_support/input_error.h"
#include "flag_settings.h"
#include "submit/job_script.h"

namespace dlaunch::submit {
namespace {

using test_support::input_error_of;
using test_support::with;

std::vector<std::string> args(std::initializer_list<const char*> words) { return {words.begin(), words.end()}; }

TEST(GpuRequestIn, FindsEveryFormOfAGpuRequest) {
  struct Case {
    std::vector<std::string> args;
    const char* name;
    std::optional<int> count;
  };
  const std::vector<Case> cases = {
      {args({"--gres=gpu:8"}), "--gres", 8},
      {args({"--gres=gpu:a100:4"}), "--gres", 4},
      {args({"--gres=gpu"}), "--gres", 1},
      {args({"--gres=gpu:a100"}), "--gres", 1},
      {args({"--gres=shard:2,gpu:2"}), "--gres", 2},
      {args({"--gres", "gpu:8"}), "--gres", 8},
      {args({"--gpus=16"}), "--gpus", 16},
      {args({"--gpus=a100:16"}), "--gpus", 16},
      {args({"-G", "16"}), "--gpus", 16},
      {args({"-G16"}), "--gpus", 16},
      {args({"--gpus-per-node=4"}), "--gpus-per-node", 4},
      {args({"--gpus-per-node=h100:4"}), "--gpus-per-node", 4},
      {args({"--gpus-per-task=1"}), "--gpus-per-task", 1},
      {args({"--gpus-per-socket=2"}), "--gpus-per-socket", 2},
      {args({"--tres-per-task=gres/gpu:1"}), "--tres-per-task", std::nullopt},
      {args({"--qos=high", "--gres=gpu:2"}), "--gres", 2},
  };
  for (const auto& each : cases) {
    auto found = gpu_request_in(each.args);
    ASSERT_TRUE(found) << each.args.front();
    EXPECT_EQ(found->name, each.name) << each.args.front();
    EXPECT_EQ(found->count, each.count) << each.args.front();
  }
  EXPECT_EQ(gpu_request_in(args({"--gres", "gpu:8"}))->option, "--gres gpu:8");
}

TEST(GpuRequestIn, LeavesWhatAsksForNoGpu) {
  for (const auto& other : {args({}), args({"--gres=none"}), args({"--gres=shard:2"}), args({"--gpu-bind=closest"}),
                            args({"--gpu-freq=high"}), args({"--comment=--gres=gpu:8"}), args({"--gres"}),
                            args({"--tres-per-task=cpu:4"})})
    EXPECT_FALSE(gpu_request_in(other)) << (other.empty() ? "" : other.front());
}

TEST(CpuRequestIn, FindsEveryFormOfACpuRequest) {
  EXPECT_EQ(cpu_request_in(args({"--cpus-per-task=16"}))->count, 16);
  EXPECT_EQ(cpu_request_in(args({"-c", "6"}))->name, "--cpus-per-task");
  EXPECT_EQ(cpu_request_in(args({"-c6"}))->count, 6);
  EXPECT_EQ(cpu_request_in(args({"--cpus-per-gpu=8"}))->name, "--cpus-per-gpu");
  EXPECT_EQ(cpu_request_in(args({"--mincpus=32"}))->name, "--mincpus");
  EXPECT_FALSE(cpu_request_in(args({"--constraint=cpu", "--comment=c"})));
}

TEST(PartitionIn, ReadsBothForms) {
  EXPECT_EQ(partition_in(args({"--partition=gpu"})), "gpu");
  EXPECT_EQ(partition_in(args({"-p", "a,b"})), "a,b");
  EXPECT_EQ(partition_in(args({"--qos=x"})), std::nullopt);
}

Resources node_resources(const SubmitSettings& settings, int nodes = 1) {
  return resources_of(settings, settings.list("sbatch-arg"), nodes, false);
}

TEST(Resources, OneCpuPerWorkerByDefault) {
  Resources resources = node_resources(default_submit_settings());
  EXPECT_EQ(resources.gpus_per_node, 1);
  EXPECT_TRUE(resources.own_gpu_request);
  EXPECT_EQ(resources.cpus_per_worker, kDefaultCpusPerWorker);
}

TEST(Resources, CpusPerGpuGivenOrFromThePartition) {
  EXPECT_EQ(node_resources(with({{"cpus-per-gpu", std::int64_t{6}}})).cpus_per_worker, 6);
  SubmitSettings settings = default_submit_settings();
  settings.set("cpus-per-gpu", std::int64_t{12}, std::string(kPartitionDefaultSource) + " 'gpu'");
  EXPECT_EQ(node_resources(settings).cpus_per_worker, 12);
  EXPECT_FALSE(given_by_user(settings, "cpus-per-gpu"));
  EXPECT_TRUE(given_by_user(with({{"cpus-per-gpu", std::int64_t{2}}}), "cpus-per-gpu"));
}

TEST(Resources, ExclusiveAsksForNoCpusUnlessGiven) {
  EXPECT_EQ(node_resources(with({{"exclusive", true}})).cpus_per_worker, std::nullopt);
  EXPECT_EQ(node_resources(with({{"exclusive", true}, {"cpus-per-gpu", std::int64_t{4}}})).cpus_per_worker, 4);
}

TEST(Resources, AGpuRequestInSbatchArgsReplacesDlaunchs) {
  Resources resources = node_resources(with({{"sbatch-arg", std::vector<std::string>{"--gres=gpu:8"}}}));
  EXPECT_FALSE(resources.own_gpu_request);
  EXPECT_EQ(resources.gpus_per_node, 8);  // the workers per node, and the CPUs follow them
  EXPECT_EQ(node_resources(with({{"sbatch-arg", std::vector<std::string>{"-G", "16"}}}), 2).gpus_per_node, 8);
  EXPECT_EQ(node_resources(with({{"sbatch-arg", std::vector<std::string>{"--gpus-per-task=2"}}})).gpus_per_node, 2);
  // The same count given both ways is no conflict.
  EXPECT_EQ(node_resources(with({{"gpus-per-node", std::int64_t{8}},
                                 {"sbatch-arg", std::vector<std::string>{"--gres=gpu:8"}}}))
                .gpus_per_node,
            8);
  // A count that cannot be read leaves dlaunch's setting for the records.
  Resources per_socket = node_resources(with({{"gpus-per-node", std::int64_t{4}},
                                              {"sbatch-arg", std::vector<std::string>{"--gpus-per-socket=2"}}}));
  EXPECT_FALSE(per_socket.own_gpu_request);
  EXPECT_EQ(per_socket.gpus_per_node, 4);
}

TEST(Resources, DisagreeingGpuRequestsAreRefusedNamingBoth) {
  std::string message = input_error_of([] {
    node_resources(
        with({{"gpus-per-node", std::int64_t{4}}, {"sbatch-arg", std::vector<std::string>{"--gres=gpu:8"}}}));
  });
  EXPECT_NE(message.find("sbatch-arg '--gres=gpu:8' (from --sbatch-arg) gives each node 8 GPU(s), but "
                         "gpus-per-node (from --gpus-per-node) says 4"),
            std::string::npos)
      << message;
  message = input_error_of(
      [] { node_resources(with({{"sbatch-arg", std::vector<std::string>{"--gpus=10"}}}), 4); });
  EXPECT_NE(message.find("'--gpus=10' (from --sbatch-arg) must split evenly over the 4 training node(s)"),
            std::string::npos)
      << message;
  message = input_error_of([] {
    auto settings = with({{"sbatch-arg", std::vector<std::string>{"--gpus-per-task=1"}}});
    resources_of(settings, settings.list("sbatch-arg"), 1, true);
  });
  EXPECT_NE(message.find("give --gpus-per-node N too"), std::string::npos) << message;
}

TEST(Resources, ACpuRequestInSbatchArgsReplacesDlaunchs) {
  Resources resources = node_resources(with({{"sbatch-arg", std::vector<std::string>{"-c", "16"}}}));
  EXPECT_EQ(resources.cpus_per_worker, std::nullopt);
  EXPECT_EQ(resources.step_cpus_per_task, 16);
  EXPECT_EQ(node_resources(with({{"sbatch-arg", std::vector<std::string>{"--cpus-per-gpu=4"}}})).step_cpus_per_task,
            std::nullopt);
  std::string message = input_error_of([] {
    node_resources(with({{"cpus-per-gpu", std::int64_t{4}}, {"sbatch-arg", std::vector<std::string>{"-c8"}}}));
  });
  EXPECT_NE(message.find("sbatch-arg '-c8' (from --sbatch-arg) and cpus-per-gpu (from --cpus-per-gpu) both ask "
                         "for CPUs"),
            std::string::npos)
      << message;
}

TEST(Resources, ThePartitionIsAskedOnlyWhenItsDefaultWouldCount) {
  EXPECT_TRUE(wants_partition_cpu_default(default_submit_settings()));
  EXPECT_FALSE(wants_partition_cpu_default(with({{"cpus-per-gpu", std::int64_t{2}}})));
  EXPECT_FALSE(wants_partition_cpu_default(with({{"exclusive", true}})));
  EXPECT_FALSE(wants_partition_cpu_default(with({{"sbatch-arg", std::vector<std::string>{"--cpus-per-task=4"}}})));
}

// The node count and the tasks per node are dlaunch's on sbatch's and
// srun's command lines: an sbatch-arg or srun-arg that sets them again is
// refused naming both; other options pass through.
TEST(Resources, SbatchOrSrunArgsThatSetTheJobsShapeAreRefused) {
  auto refusal = [](const char* setting, std::vector<std::string> words) {
    return input_error_of([&] { refuse_contradicting_layout(with({{"nodes", std::int64_t{2}}, {setting, words}})); });
  };
  std::string message = refusal("sbatch-arg", {"--nodes=4"});
  EXPECT_NE(message.find("sbatch-arg '--nodes=4' (from --sbatch-arg) contradicts dlaunch's own --nodes=2"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("give --nodes N"), std::string::npos) << message;
  EXPECT_NE(refusal("sbatch-arg", {"-N", "4"}).find("'-N 4'"), std::string::npos);
  EXPECT_NE(refusal("srun-arg", {"--ntasks-per-node=8"}).find("srun-arg '--ntasks-per-node=8'"), std::string::npos);
  EXPECT_NE(refusal("sbatch-arg", {"-n8"}).find("contradicts dlaunch's own --ntasks-per-node"), std::string::npos);
  EXPECT_EQ(refusal("sbatch-arg", {"--nodelist=a,b", "--partition=gpu"}), "no error");
  EXPECT_EQ(refusal("srun-arg", {"--no-kill", "--export=ALL"}), "no error");
  // And the job request refuses it, before any script is written.
  EXPECT_NE(input_error_of([] { test_support::request_for(with({{"sbatch-arg", std::vector<std::string>{"-N2"}}})); }),
            "no error");
}

// sbatch gets nodes and spares together, bounded as each one is.
TEST(Resources, NodesAndSparesTogetherStayWithinTheBound) {
  auto request = [](std::int64_t spares) {
    return input_error_of(
        [&] { test_support::request_for(with({{"nodes", std::int64_t{2}}, {"spare-nodes", spares}})); });
  };
  EXPECT_NE(request(16384).find("make 16386 nodes for sbatch, more than the 16384 launchers"), std::string::npos)
      << request(16384);
  EXPECT_EQ(request(16382), "no error");
}

}  // namespace
}  // namespace dlaunch::submit
