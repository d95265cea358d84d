// dlaunch check --gate: its line, nvidia-smi's answer read, the ranks an
// error blames, and the gate run as threads over loopback.
#include "check/gate_check.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "../collective/loopback_ranks.h"

namespace dlaunch::check {
namespace {

TEST(GateCheck, TheLineHasEveryFieldInOrder) {
  GateLine line;
  line.rank = 2;
  line.host = "node3";
  line.allreduce = true;
  line.links = {{0, 9.5}, {1, 8.25}};
  line.gpu.note = "nvidia-smi not found: GPU checks skipped";
  std::string text = gate_line_text(line);
  EXPECT_EQ(text.find('\n'), std::string::npos);
  EXPECT_EQ(text,
            R"({"gate":1,"rank":2,"host":"node3","allreduce":true,"links":[{"peer":0,"gbps":9.5},)"
            R"({"peer":1,"gbps":8.25}],"error":"","gpus":null,"gpu_note":"nvidia-smi not found: GPU checks skipped"})");
}

TEST(GateCheck, AFailedLineNamesItsSuspectsAndSurvivesBadBytes) {
  GateLine line;
  line.rank = 0;
  line.host = "bad\xff" "host";
  line.error = "rank(s) 2 did not arrive";
  line.suspects = {2};
  auto document = nlohmann::json::parse(gate_line_text(line));
  EXPECT_EQ(document["suspects"], nlohmann::json({2}));
  EXPECT_EQ(document["allreduce"], false);
  EXPECT_EQ(document["error"], "rank(s) 2 did not arrive");
}

TEST(GateCheck, NvidiaSmiReadingsAndProblems) {
  auto check = read_nvidia_smi("0, 0, No, 0x0000000000000000\n"
                               "1, 3, No, 0x0000000000000004\n"
                               "2, [N/A], Yes, 0x0000000000000001\n",
                               0, false);
  ASSERT_TRUE(check.ran);
  ASSERT_EQ(check.gpus.size(), 3u);
  EXPECT_EQ(check.gpus[1].ecc_uncorrected, 3);
  EXPECT_EQ(check.gpus[1].throttle, "0x0000000000000004");
  EXPECT_FALSE(check.gpus[2].ecc_uncorrected);
  EXPECT_EQ(check.problem, "GPU 1: 3 uncorrected ECC errors; GPU 2: retired pages pending");
  GateLine line;
  line.gpu = check;
  auto document = nlohmann::json::parse(gate_line_text(line));
  EXPECT_EQ(document["gpus"][2]["ecc_uncorrected"], nullptr);
  EXPECT_EQ(document["gpus"][0]["retired_pending"], "No");
  EXPECT_EQ(document["gpu_problem"], check.problem);

  auto healthy = read_nvidia_smi("0, 0, No, 0x0000000000000001\n", 0, false);
  EXPECT_TRUE(healthy.problem.empty());
  EXPECT_TRUE(healthy.note.empty());
}

TEST(GateCheck, NvidiaSmiFailingOrHungIsNoted) {
  auto failed = read_nvidia_smi("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n", 9,
                                false);
  EXPECT_FALSE(failed.ran);
  EXPECT_EQ(failed.note, "nvidia-smi failed (exit 9): NVIDIA-SMI has failed because it couldn't communicate with "
                         "the NVIDIA driver.");
  EXPECT_TRUE(failed.problem.empty());
  auto hung = read_nvidia_smi("", -1, true);
  EXPECT_EQ(hung.note, "nvidia-smi did not answer within 10 s");
  EXPECT_EQ(hung.problem, hung.note);
  auto none = read_nvidia_smi("No devices were found\n", 0, false);
  EXPECT_FALSE(none.ran);
  EXPECT_EQ(none.note, "nvidia-smi reported no GPU: No devices were found");
}

TEST(GateCheck, SuspectsNamedByTheGroupsErrors) {
  EXPECT_EQ(suspects_in("rank(s) 2, 5 did not arrive within 30 s (6/8 arrived); start every rank", 8),
            (std::vector<int>{2, 5}));
  EXPECT_EQ(suspects_in("cannot reach the store of rank 0 at node1:29500 within 30 s: rank 0 has not started", 4),
            std::vector<int>{0});
  EXPECT_EQ(suspects_in("lost the store of rank 0 at node1:29500", 4), std::vector<int>{0});
  EXPECT_EQ(suspects_in("timed out after 40 s waiting for 'arrival/outcome' in the store: a rank did not arrive", 4),
            std::vector<int>{0});
  EXPECT_EQ(suspects_in("timed out after 30 s waiting for 'dlaunch-check/3/1' in the store", 4), std::vector<int>{3});
  EXPECT_EQ(suspects_in("timed out after 30 s waiting for 'dlaunch-check/rank_2' in the store", 4), std::vector<int>{2});
  EXPECT_EQ(suspects_in("rank(s) 9 did not arrive", 4), std::vector<int>{});
  EXPECT_EQ(suspects_in("barrier failed: Connection closed by peer", 4), std::vector<int>{});
}

std::vector<GateLine> run_ranks(int size, const CheckOptions& options, int ranks_started) {
  return collective::run_loopback_ranks(size, ranks_started, [&options](const collective::WorkerIdentity& identity) {
    return run_gate_rank(identity, options);
  });
}

// Three ranks as threads: every rank measures its two links, one per round.
TEST(GateCheck, ThreeRanksMeasureEveryLink) {
  CheckOptions options;
  options.gate = true;
  options.pair_bytes = 1 << 20;
  options.timeout = std::chrono::seconds(30);
  auto lines = run_ranks(3, options, 3);
  for (const auto& line : lines) {
    EXPECT_EQ(line.error, "") << line.rank;
    EXPECT_TRUE(line.allreduce);
    ASSERT_EQ(line.links.size(), 2u) << line.rank;
    for (const auto& link : line.links) {
      EXPECT_NE(link.peer, line.rank);
      EXPECT_GT(link.gbps, 0.0);
    }
  }
}

TEST(GateCheck, AWrongContributionIsBlamed) {
  CheckOptions options;
  options.gate = true;
  options.pair_bytes = 1024;
  options.timeout = std::chrono::seconds(30);
  options.inject_wrong_rank = 1;
  auto lines = run_ranks(3, options, 3);
  for (const auto& line : lines) {
    EXPECT_FALSE(line.allreduce);
    EXPECT_NE(line.error.find("wrong values came from rank(s) 1"), std::string::npos) << line.error;
    EXPECT_EQ(line.suspects, std::vector<int>{1});
    EXPECT_TRUE(line.links.empty());
  }
}

// Rank 2 never starts: both others name it.
TEST(GateCheck, ARankThatNeverComesIsNamed) {
  CheckOptions options;
  options.gate = true;
  options.timeout = std::chrono::seconds(1);
  auto lines = run_ranks(3, options, 2);
  for (const auto& line : lines) {
    EXPECT_NE(line.error.find("rank(s) 2 did not arrive"), std::string::npos) << line.error;
    EXPECT_EQ(line.suspects, std::vector<int>{2});
  }
}

}  // namespace
}  // namespace dlaunch::check
