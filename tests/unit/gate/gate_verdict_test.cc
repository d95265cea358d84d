// The pre-start gate's verdict: who is benched, from each node's JSON line.
#include "gate/gate_verdict.h"

#include <gtest/gtest.h>

#include <map>

namespace dlaunch::rendezvous {
namespace {

// A line as dlaunch check --gate prints it; LINKS: peer -> Gb/s.
std::string gate_line(int rank, std::map<int, double> links, const std::string& error = "",
                      std::vector<int> suspects = {}, const std::string& extra = "") {
  nlohmann::json document = {{"gate", 1}, {"rank", rank}, {"host", "h"}, {"allreduce", error.empty()},
                             {"error", error}, {"gpus", nullptr}};
  document["links"] = nlohmann::json::array();
  for (auto [peer, gbps] : links) document["links"].push_back({{"peer", peer}, {"gbps", gbps}});
  if (!suspects.empty()) document["suspects"] = suspects;
  std::string text = document.dump();
  if (!extra.empty()) text = text.substr(0, text.size() - 1) + "," + extra + "}";
  return text;
}

GateNodeReport reported(int slot, const std::string& line, int exit_code = 0) {
  GateNodeReport report;
  report.slot = slot;
  report.host = "node" + std::to_string(slot + 1);
  report.arrived = true;
  report.reported = true;
  report.line = line;
  report.exit_code = exit_code;
  return report;
}

const GateNodeVerdict& node(const GateResult& result, int slot) {
  for (const auto& verdict : result.nodes)
    if (verdict.slot == slot) return verdict;
  throw std::runtime_error("no such slot");
}

// Three nodes, gate rank = slot, with the links A-B, A-C, B-C.
std::vector<GateNodeReport> three(double ab, double ac, double bc) {
  return {reported(0, gate_line(0, {{1, ab}, {2, ac}})), reported(1, gate_line(1, {{0, ab}, {2, bc}})),
          reported(2, gate_line(2, {{0, ac}, {1, bc}}))};
}

TEST(GateVerdict, AllHealthyPass) {
  auto result = judge_gate({0, 1, 2}, three(9.8, 9.6, 9.7));
  EXPECT_TRUE(result.benched_hosts.empty());
  EXPECT_TRUE(result.problem.empty());
  EXPECT_DOUBLE_EQ(result.median_gbps, 9.8);  // the nodes read 9.8, 9.8, 9.7
  EXPECT_DOUBLE_EQ(node(result, 0).link_gbps, 9.8);  // upper median of {9.6, 9.8}
  EXPECT_EQ(node(result, 2).gate_rank, 2);
  EXPECT_NE(gate_summary(result).find("3 of 3 nodes passed"), std::string::npos) << gate_summary(result);
}

// One slow node of three: its two links are slow, and each other node has
// one fast and one slow link. The upper median keeps those two fast.
TEST(GateVerdict, TheSlowNodeOfThreeIsBenched) {
  auto result = judge_gate({0, 1, 2}, three(9.8, 0.1, 0.1));
  EXPECT_DOUBLE_EQ(node(result, 0).link_gbps, 9.8);
  EXPECT_DOUBLE_EQ(node(result, 1).link_gbps, 9.8);
  EXPECT_DOUBLE_EQ(node(result, 2).link_gbps, 0.1);
  EXPECT_DOUBLE_EQ(result.median_gbps, 9.8);
  EXPECT_FALSE(node(result, 0).benched);
  EXPECT_FALSE(node(result, 1).benched);
  ASSERT_TRUE(node(result, 2).benched);
  EXPECT_EQ(node(result, 2).why, "its links run at 0.10 Gb/s, under half the median 9.80 Gb/s");
  EXPECT_EQ(result.benched_hosts, std::vector<std::string>{"node3"});
  EXPECT_NE(gate_summary(result).find("node3 (slot 2) benched: its links run at 0.10 Gb/s"), std::string::npos);
  EXPECT_NE(gate_summary(result).find("2 of 3 nodes passed"), std::string::npos);
}

// Launchers that share a host share its NIC: the slow one of three on one
// loaded machine is that machine's scheduling, not a slow link; judged as
// one host, nobody is benched. A host whose launchers are all slow still is.
TEST(GateVerdict, LaunchersOnOneHostAreJudgedAsTheirHost) {
  auto on_one_host = three(9.8, 0.1, 0.1);
  for (auto& report : on_one_host) report.host = "vm";
  auto shared = judge_gate({0, 1, 2}, on_one_host);
  EXPECT_TRUE(shared.benched_hosts.empty()) << gate_summary(shared);
  EXPECT_NE(gate_summary(shared).find("3 of 3 nodes passed"), std::string::npos) << gate_summary(shared);

  // Two launchers on each of hosts A, B and C; every link to C is slow.
  std::vector<GateNodeReport> three_hosts;
  const std::string hosts[] = {"A", "A", "B", "B", "C", "C"};
  for (int slot = 0; slot < 6; ++slot) {
    std::map<int, double> links;
    for (int peer = 0; peer < 6; ++peer)
      if (peer != slot) links[peer] = (hosts[slot] == "C") != (hosts[peer] == "C") ? 0.1 : 9.8;
    three_hosts.push_back(reported(slot, gate_line(slot, links)));
    three_hosts.back().host = hosts[slot];
  }
  auto result = judge_gate({0, 1, 2, 3, 4, 5}, three_hosts);
  for (int slot = 0; slot < 4; ++slot) EXPECT_FALSE(node(result, slot).benched) << slot << ": " << gate_summary(result);
  EXPECT_TRUE(node(result, 4).benched) << gate_summary(result);
  EXPECT_TRUE(node(result, 5).benched) << gate_summary(result);
  EXPECT_EQ(node(result, 4).why, "its links run at 0.10 Gb/s, under half the median 9.80 Gb/s");
}

// Each link is the lower of both ends' figures.
TEST(GateVerdict, ALinkIsTheLowerOfBothEnds) {
  auto reports = std::vector<GateNodeReport>{reported(0, gate_line(0, {{1, 9.0}})),
                                             reported(1, gate_line(1, {{0, 4.0}}))};
  auto result = judge_gate({0, 1}, reports);
  EXPECT_DOUBLE_EQ(result.gbps[0][1], 4.0);
  EXPECT_DOUBLE_EQ(result.gbps[1][0], 4.0);
  EXPECT_DOUBLE_EQ(result.gbps[0][0], 0.0);
}

// Two nodes share one link: both read the same figure, so speed benches neither.
TEST(GateVerdict, TwoNodesOneSlowLinkBenchesNeither) {
  auto reports = std::vector<GateNodeReport>{reported(0, gate_line(0, {{1, 0.1}})),
                                             reported(1, gate_line(1, {{0, 0.1}}))};
  auto result = judge_gate({0, 1}, reports);
  EXPECT_TRUE(result.benched_hosts.empty());
  EXPECT_DOUBLE_EQ(result.median_gbps, 0.1);
}

TEST(GateVerdict, ANodeThatDidNotJoinIsBenched) {
  auto reports = std::vector<GateNodeReport>{reported(0, gate_line(0, {{1, 9.0}})),
                                             reported(1, gate_line(1, {{0, 9.0}}))};
  GateNodeReport absent;
  absent.slot = 2;
  absent.host = "node3";
  reports.push_back(absent);
  auto result = judge_gate({0, 1}, reports, 30);
  ASSERT_EQ(result.nodes.size(), 3u);
  EXPECT_TRUE(node(result, 2).benched);
  EXPECT_EQ(node(result, 2).gate_rank, -1);
  EXPECT_EQ(node(result, 2).why, "did not join within --gate-timeout (30 s)");
  EXPECT_FALSE(node(result, 0).benched);
  EXPECT_NE(gate_summary(result).find("2 of 3 nodes passed"), std::string::npos);
}

// A node whose check crashed (no line) while the others passed.
TEST(GateVerdict, ACrashedNodeIsBenchedWithTheLaunchersReason) {
  auto reports = three(9.0, 9.0, 9.0);
  reports[1].line.clear();
  reports[1].reported = false;
  reports[1].exit_code = 139;
  reports[1].launcher_error = "dlaunch-check was killed by SIGSEGV";
  auto result = judge_gate({0, 1, 2}, reports);
  EXPECT_TRUE(node(result, 1).benched);
  EXPECT_EQ(node(result, 1).why, "dlaunch-check was killed by SIGSEGV");
  EXPECT_FALSE(node(result, 0).benched);
  EXPECT_FALSE(node(result, 2).benched);

  reports[1].launcher_error.clear();
  reports[1].reported = true;
  result = judge_gate({0, 1, 2}, reports);
  EXPECT_EQ(node(result, 1).why, "its gate check ended without a line (exit code 139)");
}

TEST(GateVerdict, GarbageOrOversizedLinesAreRefused) {
  auto reports = three(9.0, 9.0, 9.0);
  reports[2].line = "Segmentation fault (core dumped)";
  auto result = judge_gate({0, 1, 2}, reports);
  EXPECT_TRUE(node(result, 2).benched);
  EXPECT_NE(node(result, 2).why.find("not the gate's JSON: 'Segmentation fault"), std::string::npos)
      << node(result, 2).why;

  reports[2].line = gate_line(2, {{0, 9.0}, {1, 9.0}}, "", {}, "\"pad\":\"" + std::string(300000, 'x') + "\"");
  result = judge_gate({0, 1, 2}, reports);
  EXPECT_NE(node(result, 2).why.find("too long"), std::string::npos) << node(result, 2).why;

  for (std::string bad : {gate_line(1, {{0, 9.0}}), gate_line(2, {{7, 9.0}}), gate_line(2, {{2, 9.0}}),
                          gate_line(2, {{0, -1.0}}), std::string(R"({"gate":1,"rank":2,"allreduce":"yes"})")}) {
    reports[2].line = bad;
    result = judge_gate({0, 1, 2}, reports);
    EXPECT_TRUE(node(result, 2).benched) << bad;
    EXPECT_NE(node(result, 2).why.find("malformed"), std::string::npos) << node(result, 2).why;
    EXPECT_FALSE(node(result, 0).benched) << bad;
  }
}

// Issue 24: a line nested deep within the size cap overflowed the stack
// of node 0's launcher when its "links" were copied. Now the node is
// benched, its line refused with the reason, and the others pass.
TEST(GateVerdict, ADeeplyNestedLineIsRefusedNotACrash) {
  auto reports = three(9.0, 9.0, 9.0);
  const std::size_t depth = (kMaxGateLineBytes - 100) / 2;
  reports[2].line = R"({"gate":1,"rank":2,"allreduce":true,"error":"","links":)" + std::string(depth, '[') +
                    std::string(depth, ']') + "}";
  ASSERT_LE(reports[2].line.size(), kMaxGateLineBytes);
  auto result = judge_gate({0, 1, 2}, reports);
  EXPECT_TRUE(node(result, 2).benched);
  EXPECT_NE(node(result, 2).why.find("not the gate's JSON"), std::string::npos) << node(result, 2).why;
  EXPECT_NE(node(result, 2).why.find("nested deeper than"), std::string::npos) << node(result, 2).why;
  EXPECT_FALSE(node(result, 0).benched);
  EXPECT_FALSE(node(result, 1).benched);
}

TEST(GateVerdict, AFailingNodeAmongPassingOnesIsBenched) {
  auto reports = three(9.0, 9.0, 9.0);
  reports[1].line = gate_line(1, {{0, 9.0}}, "the link to rank 2 failed: receive failed", {2});
  reports[1].exit_code = 1;
  auto result = judge_gate({0, 1, 2}, reports);
  EXPECT_TRUE(node(result, 1).benched);
  EXPECT_EQ(node(result, 1).why, "its gate check failed: the link to rank 2 failed: receive failed");
}

// Every node failed: rank 2 never reached the store, the others name it.
TEST(GateVerdict, WhenAllFailTheSuspectsOfAMajorityAreBenched) {
  std::string absent = "rank(s) 2 did not arrive within 30 s (2/3 arrived)";
  std::vector<GateNodeReport> reports = {
      reported(0, gate_line(0, {}, absent, {2}), 1), reported(1, gate_line(1, {}, absent, {2}), 1),
      reported(2, gate_line(2, {}, "cannot reach the store of rank 0", {0}), 1)};
  auto result = judge_gate({0, 1, 2}, reports);
  EXPECT_FALSE(node(result, 0).benched);
  EXPECT_FALSE(node(result, 1).benched);
  ASSERT_TRUE(node(result, 2).benched);
  EXPECT_NE(node(result, 2).why.find("2 of 3 nodes blame this one"), std::string::npos) << node(result, 2).why;
  EXPECT_TRUE(result.problem.empty());
}

// Every node failed, and the node that crashed wrote no line: it is benched,
// the others failed because of it.
TEST(GateVerdict, WhenAllFailANodeWithoutALineIsBenched) {
  std::vector<GateNodeReport> reports = {reported(0, gate_line(0, {}, "barrier failed: connection closed"), 1),
                                         reported(1, gate_line(1, {}, "the link to rank 2 failed", {2}), 1),
                                         reported(2, "", 137)};
  reports[2].launcher_error = "dlaunch-check was killed by SIGKILL";
  auto result = judge_gate({0, 1, 2}, reports);
  EXPECT_FALSE(node(result, 0).benched);
  EXPECT_FALSE(node(result, 1).benched);
  EXPECT_TRUE(node(result, 2).benched);
  EXPECT_EQ(node(result, 2).why, "dlaunch-check was killed by SIGKILL");
}

TEST(GateVerdict, WhenAllFailWithoutSuspectsNoneIsBenched) {
  std::vector<GateNodeReport> reports = {
      reported(0, gate_line(0, {}, "creating gloo's TCP device on interface ib9 failed"), 1),
      reported(1, gate_line(1, {}, "creating gloo's TCP device on interface ib9 failed"), 1)};
  auto result = judge_gate({0, 1}, reports);
  EXPECT_TRUE(result.benched_hosts.empty());
  EXPECT_NE(result.problem.find("the gate's check failed on every node"), std::string::npos);
  EXPECT_NE(result.problem.find("node1: its gate check failed: creating gloo's TCP device"), std::string::npos)
      << result.problem;
  EXPECT_NE(gate_summary(result).find("the gate's check failed on every node"), std::string::npos);
  EXPECT_NE(gate_report_text(result).find("# problem"), std::string::npos);
  EXPECT_EQ(gate_report_json(result)["problem"], result.problem);
  // Nobody passed: no line may say otherwise.
  EXPECT_TRUE(node(result, 0).failed);
  EXPECT_TRUE(node(result, 1).failed);
  EXPECT_NE(node(result, 1).why.find("creating gloo's TCP device"), std::string::npos) << node(result, 1).why;
  EXPECT_NE(gate_summary(result).find("0 of 2 nodes passed"), std::string::npos) << gate_summary(result);
  EXPECT_NE(gate_report_text(result).find("0 of 2 nodes passed"), std::string::npos);
  EXPECT_EQ(gate_report_text(result).find(" passed "), std::string::npos) << gate_report_text(result);
  EXPECT_EQ(gate_report_json(result)["passed"], 0);
  EXPECT_EQ(gate_report_json(result)["nodes"][0]["failed"], true);

  // Two nodes blaming each other: no majority either.
  reports = {reported(0, gate_line(0, {}, "rank(s) 1 did not arrive", {1}), 1),
             reported(1, gate_line(1, {}, "cannot reach the store of rank 0", {0}), 1)};
  result = judge_gate({0, 1}, reports);
  EXPECT_TRUE(result.benched_hosts.empty());
  EXPECT_FALSE(result.problem.empty());

  // No node wrote a line (dlaunch-check missing everywhere): none benched.
  reports = {reported(0, "", 127), reported(1, "", 127)};
  result = judge_gate({0, 1}, reports);
  EXPECT_TRUE(result.benched_hosts.empty());
  EXPECT_FALSE(result.problem.empty());
}

TEST(GateVerdict, AGpuProblemBenchesTheNode) {
  auto reports = three(9.0, 9.0, 9.0);
  reports[0].line = gate_line(0, {{1, 9.0}, {2, 9.0}}, "", {},
                              "\"gpu_problem\":\"GPU 3: 2 uncorrected ECC errors\"");
  auto result = judge_gate({0, 1, 2}, reports);
  EXPECT_TRUE(node(result, 0).benched);
  EXPECT_EQ(node(result, 0).why, "GPU problem: GPU 3: 2 uncorrected ECC errors");
  EXPECT_FALSE(node(result, 1).benched);
}

TEST(GateVerdict, GpuNotesAreGathered) {
  auto reports = three(9.0, 9.0, 9.0);
  for (int rank = 0; rank < 3; ++rank) {
    std::map<int, double> links;
    for (int peer = 0; peer < 3; ++peer)
      if (peer != rank) links[peer] = 9.0;
    reports[static_cast<std::size_t>(rank)].line =
        gate_line(rank, links, "", {}, "\"gpu_note\":\"nvidia-smi not found: GPU checks skipped\"");
  }
  auto result = judge_gate({0, 1, 2}, reports);
  EXPECT_EQ(result.gpu_note, "nvidia-smi not found: GPU checks skipped (every node)");
  EXPECT_TRUE(result.benched_hosts.empty());
}

TEST(GateVerdict, ReportsNameHostsInTheMatrixAndReasons) {
  auto result = judge_gate({0, 1, 2}, three(9.8, 0.1, 0.1));
  std::string text = gate_report_text(result);
  EXPECT_NE(text.find("2 of 3 nodes passed"), std::string::npos) << text;
  EXPECT_NE(text.find("node1"), std::string::npos);
  EXPECT_NE(text.find("9.80"), std::string::npos);
  EXPECT_NE(text.find("0.10"), std::string::npos);
  EXPECT_NE(text.find("# benched\nnode3 (slot 2): its links run at 0.10 Gb/s"), std::string::npos) << text;
  auto json = gate_report_json(result);
  EXPECT_EQ(json["benched_hosts"], nlohmann::json({"node3"}));
  EXPECT_EQ(json["nodes"][2]["benched"], true);
  EXPECT_EQ(json["hosts"][0], "node1");
  EXPECT_DOUBLE_EQ(json["gbps"][0][1].get<double>(), 9.8);
}

}  // namespace
}  // namespace dlaunch::rendezvous
