// Environment derivation: flags, PET_* variables and Slurm steps.
#include "launch/launch_config.h"

#include <gtest/gtest.h>

#include "util/error.h"
#include "../test_support/input_error.h"

namespace dlaunch::launch {
namespace {

LaunchConfig resolve(std::vector<std::string> args, std::map<std::string, std::string> variables) {
  util::Environment environment(std::move(variables));
  args.push_back("train.py");
  auto options = parse_run_options(args, environment);
  EXPECT_TRUE(options.has_value());
  return resolve_launch_config(*options, environment);
}

std::map<std::string, std::string> slurm_step() {
  return {{"SLURM_JOB_ID", "4242"},          {"SLURM_STEP_ID", "0"},
          {"SLURM_NODEID", "1"},             {"SLURM_STEP_NUM_NODES", "3"},
          {"SLURM_JOB_NUM_NODES", "4"},      {"SLURM_STEP_NODELIST", "gpu[07-09]"},
          {"SLURM_JOB_NODELIST", "gpu[01-04]"}, {"SLURM_GPUS_ON_NODE", "8"}};
}

TEST(LaunchConfig, DefaultsOutsideSlurmAreTorchrunsDefaults) {
  auto config = resolve({}, {{"PATH", "/usr/bin"}});
  const Topology& topology = config.topology;
  EXPECT_EQ(topology.nnodes.value, 1);
  EXPECT_EQ(topology.node_rank.value, 0);
  EXPECT_EQ(topology.nproc_per_node.value, 1);
  EXPECT_EQ(topology.master_addr.value, "127.0.0.1");
  EXPECT_FALSE(topology.master_port.has_value());  // one node: a free port
  EXPECT_EQ(topology.run_id.value, "none");
  EXPECT_FALSE(topology.in_slurm);
  EXPECT_EQ(config.command, (std::vector<std::string>{"python3", "-u", "train.py"}));
}

TEST(LaunchConfig, SlurmStepGivesEverythingWithItsSource) {
  auto config = resolve({}, slurm_step());
  const Topology& topology = config.topology;
  EXPECT_TRUE(topology.in_slurm);
  EXPECT_EQ(topology.nnodes.value, 3);
  EXPECT_EQ(topology.nnodes.source, "SLURM_STEP_NUM_NODES");
  EXPECT_EQ(topology.node_rank.value, 1);
  EXPECT_EQ(topology.node_rank.source, "SLURM_NODEID");
  EXPECT_EQ(topology.nproc_per_node.value, 8);
  EXPECT_EQ(topology.nproc_per_node.source, "SLURM_GPUS_ON_NODE");
  EXPECT_EQ(topology.master_addr.value, "gpu07");
  EXPECT_EQ(topology.master_addr.source, "first host of SLURM_STEP_NODELIST");
  ASSERT_TRUE(topology.master_port.has_value());
  EXPECT_EQ(topology.master_port->value, derive_slurm_port("4242", 0, 20000, 32767));
  EXPECT_EQ(topology.run_id.value, "4242.0");
}

// As torchrun's c10d rendezvous: the same command on every node, no
// --node-rank; the rendezvous gives node ranks as launchers arrive.
TEST(LaunchConfig, AC10dRendezvousWithoutANodeRankTakesNodeRanksByArrival) {
  const std::vector<std::string> c10d{"--nnodes", "2", "--rdzv-backend", "c10d", "--rdzv-endpoint", "n0:29400"};
  Topology topology = resolve(c10d, {}).topology;
  EXPECT_TRUE(topology.rank_by_arrival());
  EXPECT_NE(topology.node_rank.source.find("by arrival (--rdzv-backend c10d without --node-rank)"),
            std::string::npos)
      << topology.node_rank.source;
  EXPECT_EQ(topology.master_addr.value, "n0");

  auto given = c10d;
  given.insert(given.end(), {"--node-rank", "1"});
  EXPECT_EQ(resolve(given, {}).topology.node_rank.value, 1) << "a node rank given is kept";
  EXPECT_FALSE(resolve({"--nnodes", "2", "--rdzv-backend", "static", "--master-addr", "n0"}, {})
                   .topology.rank_by_arrival())
      << "the static rendezvous takes --node-rank, 0 by default, as torchrun's";
  EXPECT_FALSE(resolve({"--nnodes", "1", "--rdzv-backend", "c10d"}, {}).topology.rank_by_arrival());
  EXPECT_EQ(resolve(c10d, slurm_step()).topology.node_rank.source, "SLURM_NODEID") << "Slurm places every node";
}

TEST(LaunchConfig, JobVariablesStandInForMissingStepVariables) {
  auto variables = slurm_step();
  variables.erase("SLURM_STEP_NUM_NODES");
  variables.erase("SLURM_STEP_NODELIST");
  variables["SLURM_NODEID"] = "0";
  auto topology = resolve({}, variables).topology;
  EXPECT_EQ(topology.nnodes.value, 4);
  EXPECT_EQ(topology.nnodes.source, "SLURM_JOB_NUM_NODES");
  EXPECT_EQ(topology.master_addr.value, "gpu01");
}

TEST(LaunchConfig, GpuCountFallsBackThroughDeviceLists) {
  auto variables = slurm_step();
  variables.erase("SLURM_GPUS_ON_NODE");
  variables["CUDA_VISIBLE_DEVICES"] = "0,1,3";
  EXPECT_EQ(resolve({}, variables).topology.nproc_per_node.value, 3);
  variables.erase("CUDA_VISIBLE_DEVICES");
  variables["SLURM_STEP_GPUS"] = "4,5";
  EXPECT_EQ(resolve({}, variables).topology.nproc_per_node.source, "SLURM_STEP_GPUS");
  variables.erase("SLURM_STEP_GPUS");
  variables["SLURM_JOB_GPUS"] = "0,1,2,3,4,5";
  EXPECT_EQ(resolve({}, variables).topology.nproc_per_node.value, 6);
  variables.erase("SLURM_JOB_GPUS");
  auto fallback = resolve({}, variables).topology.nproc_per_node;
  EXPECT_EQ(fallback.value, 1);
  EXPECT_EQ(fallback.source, "default");
}

TEST(LaunchConfig, NoDevFilesCountsAsNoGpu) {
  auto variables = slurm_step();
  variables.erase("SLURM_GPUS_ON_NODE");
  variables["CUDA_VISIBLE_DEVICES"] = "NoDevFiles";
  EXPECT_EQ(resolve({}, variables).topology.nproc_per_node.value, 1);
}

TEST(LaunchConfig, SlurmsNodeListSaysWhereEachSlotsLauncherRuns) {
  EXPECT_EQ(resolve({}, slurm_step()).topology.expected_hosts,
            (std::vector<std::string>{"gpu07", "gpu08", "gpu09"}));
  // Slots given by hand need not follow Slurm's order: no host is assumed.
  EXPECT_TRUE(resolve({"--node-rank", "1"}, slurm_step()).topology.expected_hosts.empty());
  auto one_node = slurm_step();
  one_node["SLURM_STEP_NUM_NODES"] = "1";
  one_node["SLURM_STEP_NODELIST"] = "gpu07";
  one_node["SLURM_NODEID"] = "0";
  EXPECT_TRUE(resolve({}, one_node).topology.expected_hosts.empty());
  auto longer_list = slurm_step();
  longer_list["SLURM_STEP_NODELIST"] = "gpu[07-10]";  // does not fit 3 launchers
  EXPECT_TRUE(resolve({}, longer_list).topology.expected_hosts.empty());
}

TEST(LaunchConfig, FlagsWinOverPetVariablesWhichWinOverSlurm) {
  auto variables = slurm_step();
  variables["PET_NPROC_PER_NODE"] = "2";
  variables["PET_MASTER_ADDR"] = "10.0.0.9";
  auto from_pet = resolve({}, variables).topology;
  EXPECT_EQ(from_pet.nproc_per_node.value, 2);
  EXPECT_EQ(from_pet.nproc_per_node.source, "PET_NPROC_PER_NODE");
  EXPECT_EQ(from_pet.master_addr.value, "10.0.0.9");
  auto from_flag = resolve({"--nproc_per_node", "5", "--master-port", "29999"}, variables).topology;
  EXPECT_EQ(from_flag.nproc_per_node.value, 5);
  EXPECT_EQ(from_flag.nproc_per_node.source, "--nproc-per-node");
  EXPECT_EQ(from_flag.master_port->value, 29999);
}

TEST(LaunchConfig, ReservedStepPortsAreUsedFirst) {
  auto variables = slurm_step();
  variables["SLURM_STEP_RESV_PORTS"] = "12000-12004";
  auto port = resolve({}, variables).topology.master_port;
  ASSERT_TRUE(port);
  EXPECT_EQ(port->value, 12000);
  EXPECT_EQ(port->source, "SLURM_STEP_RESV_PORTS");
}

TEST(LaunchConfig, DerivedPortsDifferBetweenNeighbouringJobsAndSteps) {
  std::set<int> ports;
  for (int job = 1000; job < 1100; ++job) {
    for (std::uint64_t step = 0; step < 4; ++step)
      ports.insert(derive_slurm_port(std::to_string(job), step, 20000, 32767));
  }
  EXPECT_EQ(ports.size(), 400u);
  for (int port : ports) {
    EXPECT_GE(port, 20000);
    EXPECT_LE(port, 32767);
  }
}

TEST(LaunchConfig, PortRangeIsConfigurable) {
  auto port = resolve({"--port-range", "40000-40009"}, slurm_step()).topology.master_port;
  EXPECT_GE(port->value, 40000);
  EXPECT_LE(port->value, 40009);
  EXPECT_THROW(resolve({"--port-range", "5-4"}, slurm_step()), util::InputError);
}

// launch_site_test.cc has the refusal; here, what a batch step given
// --nnodes by hand resolves to.
TEST(LaunchConfig, BatchStepOfMultiNodeJobIsRefusedUnlessPlacedByHand) {
  std::map<std::string, std::string> batch = {{"SLURM_JOB_ID", "77"},
                                              {"SLURM_NODEID", "0"},
                                              {"SLURM_JOB_NUM_NODES", "2"},
                                              {"SLURM_JOB_NODELIST", "n[1-2]"}};
  EXPECT_THROW(resolve({}, batch), util::InputError);
  auto topology = resolve({"--nnodes", "2"}, batch).topology;
  EXPECT_EQ(topology.nnodes.value, 2);
  EXPECT_TRUE(topology.notices.empty());
}

TEST(LaunchConfig, NotInSlurmWithoutNodeId) {
  auto topology = resolve({}, {{"SLURM_JOB_ID", "5"}, {"SLURM_JOB_NUM_NODES", "1"}}).topology;
  EXPECT_FALSE(topology.in_slurm);
  EXPECT_EQ(topology.nnodes.value, 1);
  EXPECT_FALSE(resolve({"--nnodes", "1"}, {{"SLURM_JOB_ID", "5"}, {"SLURM_JOB_NUM_NODES", "4"}}).topology.in_slurm);
}

TEST(LaunchConfig, StandaloneIsLocalhostOnAFreePort) {
  auto config = resolve({"--standalone", "--nproc-per-node", "2"}, slurm_step());
  EXPECT_EQ(config.topology.nnodes.value, 1);
  EXPECT_EQ(config.topology.node_rank.value, 0);
  EXPECT_EQ(config.topology.master_addr.value, "localhost");
  EXPECT_FALSE(config.topology.master_port);
  EXPECT_NE(config.topology.run_id.value, "none");
}

TEST(LaunchConfig, RendezvousEndpointGivesAddressAndPort) {
  auto topology = resolve({"--nnodes", "2", "--rdzv-endpoint", "head:1234"}, {}).topology;
  EXPECT_EQ(topology.master_addr.value, "head");
  EXPECT_EQ(topology.master_port->value, 1234);
  auto v6 = resolve({"--nnodes", "2", "--rdzv_endpoint", "[::1]:77"}, {}).topology;
  EXPECT_EQ(v6.master_addr.value, "::1");
  EXPECT_EQ(v6.master_port->value, 77);
}

TEST(LaunchConfig, MultiNodeDefaultsToPort29500) {
  auto topology = resolve({"--nnodes", "2:2", "--node-rank", "1"}, {}).topology;
  EXPECT_EQ(topology.nnodes.value, 2);
  EXPECT_EQ(topology.master_port->value, 29500);
}

TEST(LaunchConfig, BadValuesNameTheirSource) {
  auto message = [](std::vector<std::string> args, std::map<std::string, std::string> variables) {
    try {
      resolve(std::move(args), std::move(variables));
    } catch (const util::InputError& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({"--nnodes", "1:4"}, {}).find("elastic"), std::string::npos);
  EXPECT_NE(message({"--nnodes", "2", "--node-rank", "2"}, {}).find("out of range"),
            std::string::npos);
  EXPECT_NE(message({"--nproc-per-node", "zero"}, {}).find("--nproc-per-node"), std::string::npos);
  EXPECT_NE(message({}, {{"PET_NNODES", "x"}}).find("PET_NNODES"), std::string::npos);
  auto variables = slurm_step();
  variables["SLURM_NODEID"] = "one";
  EXPECT_NE(message({}, variables).find("SLURM_NODEID"), std::string::npos);
  variables = slurm_step();
  variables["SLURM_STEP_NODELIST"] = "gpu[07-";
  EXPECT_NE(message({}, variables).find("SLURM_STEP_NODELIST"), std::string::npos);
  EXPECT_NE(message({"--max-restarts", "-1"}, {}).find("--max-restarts"), std::string::npos);
  EXPECT_NE(message({"--no-python", "--module"}, {}).find("--module"), std::string::npos);
}

TEST(LaunchConfig, ProgramKinds) {
  EXPECT_EQ(resolve({"--no-python"}, {}).command, (std::vector<std::string>{"train.py"}));
  EXPECT_EQ(resolve({"--python", "/usr/bin/python3"}, {}).command,
            (std::vector<std::string>{"/usr/bin/python3", "-u", "train.py"}));
  EXPECT_EQ(resolve({}, {{"PYTHON_EXEC", "/opt/py"}}).command.front(), "/opt/py");
  EXPECT_EQ(resolve({"-m"}, {}).command,
            (std::vector<std::string>{"python3", "-u", "-m", "train.py"}));
  util::Environment environment;
  auto options = parse_run_options({"/bin/echo", "hi"}, environment);
  EXPECT_EQ(resolve_launch_config(*options, environment).command,
            (std::vector<std::string>{"/bin/echo", "hi"}));
}

TEST(LaunchConfig, StreamRoutingParsesTorchrunValues) {
  auto all = parse_stream_routing(Setting{"3", "-r"});
  EXPECT_EQ(all.mask_for(0), kBothStreams);
  auto per_rank = parse_stream_routing(Setting{"0:1,1:2", "-t"});
  EXPECT_EQ(per_rank.mask_for(0), kStdout);
  EXPECT_EQ(per_rank.mask_for(1), kStderr);
  EXPECT_EQ(per_rank.mask_for(2), kNoStream);
  EXPECT_THROW(parse_stream_routing(Setting{"4", "-r"}), util::InputError);
  EXPECT_THROW(parse_stream_routing(Setting{"0:1:2", "-r"}), util::InputError);
}

TEST(LaunchConfig, RdzvConfJoinTimeoutIsHonoured) {
  auto config = resolve({"--rdzv-conf", "join_timeout=12,other=1"}, {});
  EXPECT_EQ(config.job.join_timeout, std::chrono::seconds(12));
  auto explicit_wins = resolve({"--rdzv-conf", "join_timeout=12", "--rdzv-timeout", "5"}, {});
  EXPECT_EQ(explicit_wins.job.join_timeout, std::chrono::seconds(5));
}

// What a bad value's InputError says, or "no error".
std::string error_of(std::vector<std::string> args, std::map<std::string, std::string> variables) {
  return test_support::input_error_of([&] { resolve(std::move(args), std::move(variables)); });
}

// --port-range matters only inside a Slurm step, but a bad one is refused
// everywhere, so it is found on the first run and not in a job.
TEST(LaunchConfig, PortRangeIsCheckedOutsideSlurmToo) {
  EXPECT_NE(error_of({"--port-range", "5-2"}, {}).find("--port-range low"), std::string::npos);
  EXPECT_NE(error_of({"--port-range", "30000-20000"}, {}).find("--port-range high"),
            std::string::npos);
  EXPECT_NE(error_of({"--port-range", "20000"}, {}).find("LOW-HIGH"), std::string::npos);
  EXPECT_NE(error_of({"--standalone", "--port-range", "5-2"}, {}).find("--port-range"),
            std::string::npos);
  EXPECT_NE(error_of({}, {{"PET_PORT_RANGE", "1-2"}}).find("PET_PORT_RANGE"), std::string::npos);
  EXPECT_EQ(error_of({"--port-range", "21000-21010"}, {}), "no error");
}

TEST(LaunchConfig, MasterPortIsCheckedWithStandaloneToo) {
  EXPECT_NE(error_of({"--standalone", "--master-port", "70000"}, {}).find("--master-port"),
            std::string::npos);
  EXPECT_NE(error_of({"--standalone", "--master-port", "x"}, {}).find("--master-port"),
            std::string::npos);
  EXPECT_NE(error_of({"--master-port", "70000"}, {}).find("--master-port"), std::string::npos);
  auto standalone = resolve({"--standalone", "--master-port", "29400"}, {});
  EXPECT_FALSE(standalone.topology.master_port.has_value());  // still a free port, as torchrun
}

TEST(LaunchConfig, KillEscapedDefaultsToTheSubreaperEvenInSlurm) {
  auto plain = resolve({}, {});
  EXPECT_EQ(plain.kill_escaped.value, KillEscaped::kSubreaper);
  EXPECT_EQ(plain.kill_escaped.source, "default");
  EXPECT_EQ(resolve({}, slurm_step()).kill_escaped.value, KillEscaped::kSubreaper);
  auto cgroup = resolve({"--kill-escaped", "cgroup"}, {});
  EXPECT_EQ(cgroup.kill_escaped.value, KillEscaped::kCgroup);
  EXPECT_EQ(cgroup.kill_escaped.source, "--kill-escaped");
  auto off = resolve({}, {{"PET_KILL_ESCAPED", "off"}});
  EXPECT_EQ(off.kill_escaped.value, KillEscaped::kOff);
  EXPECT_EQ(off.kill_escaped.source, "PET_KILL_ESCAPED");
  std::string bad = error_of({"--kill-escaped", "all"}, {});
  EXPECT_NE(bad.find("--kill-escaped"), std::string::npos) << bad;
  EXPECT_NE(bad.find("'all'"), std::string::npos) << bad;
  EXPECT_NE(bad.find("subreaper"), std::string::npos) << bad;
}

TEST(LaunchConfig, ConsoleOverflowBlocksByDefaultAndDropsOnlyWhenAsked) {
  auto plain = resolve({}, {});
  EXPECT_EQ(plain.console_overflow.value, util::ConsoleOverflow::kBlock);
  EXPECT_EQ(plain.console_overflow.source, "default");
  EXPECT_EQ(resolve({}, slurm_step()).console_overflow.value, util::ConsoleOverflow::kBlock);
  auto drop = resolve({"--console-overflow", "drop"}, {});
  EXPECT_EQ(drop.console_overflow.value, util::ConsoleOverflow::kDrop);
  EXPECT_EQ(drop.console_overflow.source, "--console-overflow");
  auto from_environment = resolve({}, {{"PET_CONSOLE_OVERFLOW", "drop"}});
  EXPECT_EQ(from_environment.console_overflow.value, util::ConsoleOverflow::kDrop);
  std::string bad = error_of({"--console-overflow", "lose"}, {});
  EXPECT_NE(bad.find("--console-overflow"), std::string::npos) << bad;
  EXPECT_NE(bad.find("'lose'"), std::string::npos) << bad;
  EXPECT_NE(bad.find("block"), std::string::npos) << bad;
}

TEST(LaunchConfig, LogDirRequiredFromTheFlagOrItsVariable) {
  EXPECT_FALSE(resolve({}, {}).log_dir_required);
  EXPECT_TRUE(resolve({"--log-dir-required"}, {}).log_dir_required);
  EXPECT_TRUE(resolve({}, {{"PET_LOG_DIR_REQUIRED", "1"}}).log_dir_required);
}

TEST(LaunchConfig, SpareNodesWidenTheNodeRanks) {
  auto topology = resolve({"--spare-nodes", "2", "--nnodes", "2", "--node-rank", "3"}, {}).topology;
  EXPECT_EQ(topology.nnodes.value, 2);
  EXPECT_EQ(topology.spare_nodes.value, 2);
  EXPECT_EQ(topology.spare_nodes.source, "--spare-nodes");
  EXPECT_EQ(topology.node_rank.value, 3);
  EXPECT_EQ(topology.launchers(), 4);
  std::string beyond = error_of({"--spare-nodes", "2", "--nnodes", "2", "--node-rank", "4"}, {});
  EXPECT_NE(beyond.find("out of range"), std::string::npos) << beyond;
  EXPECT_NE(beyond.find("spare"), std::string::npos) << beyond;
  EXPECT_NE(beyond.find("0 to 3"), std::string::npos) << beyond;
  EXPECT_EQ(resolve({"--nnodes", "2"}, {}).topology.spare_nodes.value, 0);
  EXPECT_NE(error_of({"--spare-nodes", "-1"}, {}).find("--spare-nodes"), std::string::npos);
}

// dlaunch submit --spare-nodes starts a step of more nodes than --nnodes:
// the nodes beyond it are the spares.
TEST(LaunchConfig, ASlurmStepOfMoreNodesThanNnodesHasSpares) {
  auto topology = resolve({"--nnodes", "2"}, slurm_step()).topology;  // 3 nodes in the step
  EXPECT_EQ(topology.nnodes.value, 2);
  EXPECT_EQ(topology.spare_nodes.value, 1);
  EXPECT_NE(topology.spare_nodes.source.find("SLURM_STEP_NUM_NODES"), std::string::npos)
      << topology.spare_nodes.source;
  EXPECT_EQ(topology.node_rank.value, 1);
  auto matching = resolve({"--nnodes", "2", "--spare-nodes", "1"}, slurm_step()).topology;
  EXPECT_EQ(matching.spare_nodes.value, 1);
  EXPECT_EQ(matching.spare_nodes.source, "--spare-nodes");
  std::string too_many = error_of({"--nnodes", "2", "--spare-nodes", "2"}, slurm_step());
  EXPECT_NE(too_many.find("--spare-nodes"), std::string::npos) << too_many;
  EXPECT_NE(too_many.find("the Slurm step has 3 nodes"), std::string::npos) << too_many;
  EXPECT_EQ(resolve({}, slurm_step()).topology.spare_nodes.value, 0);  // --nnodes from the step
  EXPECT_EQ(resolve({"--nnodes", "3"}, slurm_step()).topology.spare_nodes.value, 0);
}

// --spare-nodes without --nnodes in a step: the rest of the step trains.
TEST(LaunchConfig, SpareNodesWithoutNnodesInAStepTrainTheRest) {
  auto topology = resolve({"--spare-nodes", "1"}, slurm_step()).topology;  // 3 nodes in the step
  EXPECT_EQ(topology.nnodes.value, 2);
  EXPECT_NE(topology.nnodes.source.find("--spare-nodes"), std::string::npos) << topology.nnodes.source;
  EXPECT_EQ(topology.spare_nodes.value, 1);
  std::string none_left = error_of({"--spare-nodes", "3"}, slurm_step());
  EXPECT_NE(none_left.find("leaves no node to train"), std::string::npos) << none_left;
}

TEST(LaunchConfig, StandaloneTakesNoSpares) {
  std::string error = error_of({"--standalone", "--spare-nodes", "1"}, {});
  EXPECT_NE(error.find("cannot be used with --standalone"), std::string::npos) << error;
}

TEST(LaunchConfig, TheBatchStepNeverDerivesSpares) {
  auto batch = slurm_step();
  batch.erase("SLURM_STEP_ID");
  batch.erase("SLURM_STEP_NUM_NODES");
  batch.erase("SLURM_STEP_NODELIST");
  batch["SLURM_NODEID"] = "0";
  auto topology = resolve({"--nnodes", "2"}, batch).topology;  // a job of 4 nodes
  EXPECT_EQ(topology.nnodes.value, 2);
  EXPECT_EQ(topology.spare_nodes.value, 0);
  EXPECT_EQ(topology.spare_nodes.source, "default");
  EXPECT_EQ(resolve({"--nnodes", "2", "--spare-nodes", "1"}, batch).topology.spare_nodes.value, 1);
}

TEST(LaunchConfig, MinNodesRunsFromOneToNnodes) {
  EXPECT_EQ(resolve({"--nnodes", "2"}, {}).job.min_nodes, 2);
  EXPECT_EQ(resolve({"--nnodes", "2", "--min-nodes", "1"}, {}).job.min_nodes, 1);
  EXPECT_EQ(resolve({"--nnodes", "2", "--min-nodes", "2"}, {}).job.min_nodes, 2);
  for (const char* value : {"0", "3", "x"}) {
    std::string refused = error_of({"--nnodes", "2", "--min-nodes", value}, {});
    EXPECT_NE(refused.find("--min-nodes"), std::string::npos) << value << ": " << refused;
  }
  EXPECT_EQ(resolve({}, {{"PET_NNODES", "4"}, {"PET_MIN_NODES", "3"}}).job.min_nodes, 3);
}

TEST(LaunchConfig, NodeFailLimitDefaultsToTwo) {
  EXPECT_EQ(resolve({}, {}).job.node_fail_limit, 2);
  EXPECT_EQ(resolve({"--node-fail-limit", "0"}, {}).job.node_fail_limit, 0);
  EXPECT_EQ(resolve({"--node-fail-limit", "5"}, {}).job.node_fail_limit, 5);
  std::string negative = error_of({"--node-fail-limit", "-1"}, {});
  EXPECT_NE(negative.find("--node-fail-limit"), std::string::npos) << negative;
  EXPECT_NE(error_of({"--node-fail-limit", "1000001"}, {}), "no error");
}

}  // namespace
}  // namespace dlaunch::launch
