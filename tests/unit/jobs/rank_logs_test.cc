#include "jobs/rank_logs.h"

#include <filesystem>
#include <fstream>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "../test_support/input_error.h"
#include "../test_support/temp_dir.h"
#include "util/error.h"

namespace dlaunch::jobs {
namespace {

void touch(const std::string& path, const std::string& text = "x\n") {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << text;
}

std::vector<int> ranks_of(const AttemptLogs& logs) {
  std::vector<int> ranks;
  for (const auto& rank : logs.ranks) ranks.push_back(rank.rank);
  return ranks;
}

TEST(FindRankLogs, TheLastAttemptOfTheLastRunByDefault) {
  test_support::TempDir dir;
  touch(dir.path() + "/logs/attempt_0/rank0/stdout.log");
  touch(dir.path() + "/logs/requeue_1/attempt_0/rank0/stdout.log");
  touch(dir.path() + "/logs/requeue_1/attempt_1/rank0/stdout.log");
  touch(dir.path() + "/logs/requeue_1/attempt_1/rank1/stderr.log");
  AttemptLogs logs = find_rank_logs(dir.path(), {});
  EXPECT_EQ(logs.attempt, 1);
  EXPECT_EQ(logs.attempts, 2);
  EXPECT_EQ(ranks_of(logs), (std::vector<int>{0, 1}));
  EXPECT_EQ(logs.ranks[1].stdout_path, "");
  EXPECT_EQ(logs.ranks[1].stderr_path, dir.path() + "/logs/requeue_1/attempt_1/rank1/stderr.log");
}

TEST(FindRankLogs, NarrowsToRanksAndToANodesRanks) {
  test_support::TempDir dir;
  for (int rank = 0; rank < 4; ++rank) touch(dir.path() + "/logs/attempt_0/rank" + std::to_string(rank) + "/stdout.log");
  touch(dir.path() + "/logs/attempt_0/node1.json", R"({"node_rank": 1, "host": "n2", "ranks": [2, 3]})");
  LogChoice by_rank;
  by_rank.ranks = std::vector<int>{3, 0};
  EXPECT_EQ(ranks_of(find_rank_logs(dir.path(), by_rank)), (std::vector<int>{3, 0}));
  LogChoice by_node;
  by_node.node = 1;
  EXPECT_EQ(ranks_of(find_rank_logs(dir.path(), by_node)), (std::vector<int>{2, 3}));
}

TEST(FindRankLogs, SaysWhatIsThereWhenAskedForWhatIsNot) {
  test_support::TempDir dir;
  EXPECT_THAT(test_support::input_error_of([&] { (void)find_rank_logs(dir.path(), {}); }), ::testing::HasSubstr("no worker logs"));
  touch(dir.path() + "/logs/attempt_0/rank0/stdout.log");
  LogChoice attempt;
  attempt.attempt = 4;
  EXPECT_THAT(test_support::input_error_of([&] { (void)find_rank_logs(dir.path(), attempt); }), ::testing::HasSubstr("there: 0"));
  LogChoice rank;
  rank.ranks = std::vector<int>{7};
  EXPECT_THAT(test_support::input_error_of([&] { (void)find_rank_logs(dir.path(), rank); }), ::testing::HasSubstr("ranks there: 0"));
  LogChoice node;
  node.node = 2;
  EXPECT_THAT(test_support::input_error_of([&] { (void)find_rank_logs(dir.path(), node); }), ::testing::HasSubstr("no record of node 2"));
}

TEST(ParseRankList, ReadsListsAndRanges) {
  EXPECT_EQ(parse_rank_list("0"), (std::vector<int>{0}));
  EXPECT_EQ(parse_rank_list("0,2-4"), (std::vector<int>{0, 2, 3, 4}));
  EXPECT_THAT(test_support::input_error_of([&] { (void)parse_rank_list("x"); }), ::testing::HasSubstr("--rank 'x'"));
  EXPECT_THAT(test_support::input_error_of([&] { (void)parse_rank_list("3-1"); }), ::testing::HasSubstr("--rank '3-1'"));
  EXPECT_THAT(test_support::input_error_of([&] { (void)parse_rank_list("-1"); }), ::testing::HasSubstr("--rank '-1'"));
}

}  // namespace
}  // namespace dlaunch::jobs
