// The record of benched hosts kept across requeues: the cooldown doubling
// and its cap, expiry giving a host back, the user's own exclusions kept,
// and a garbled or hostile file refused in one line that names it.
#include "slurm/bench_record.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "util/error.h"

namespace dlaunch::slurm {
namespace {

constexpr std::int64_t kNow = 1'800'000'000;
constexpr std::int64_t kBase = 30 * 60;

std::vector<std::string> hosts_of(const std::vector<BenchEntry>& entries) {
  std::vector<std::string> hosts;
  for (const auto& entry : entries) hosts.push_back(entry.host);
  return hosts;
}

// The InputError's message for TEXT as the record at "/sub/bench-record.json".
std::string error_of(const std::string& text) {
  try {
    parse_bench_record(text, "/sub/bench-record.json");
  } catch (const util::InputError& error) {
    return error.what();
  }
  return "(accepted)";
}

TEST(BenchCooldown, DoublesWithEachBenchingUpToADay) {
  EXPECT_EQ(bench_cooldown(kBase, 1), 30 * 60);
  EXPECT_EQ(bench_cooldown(kBase, 2), 60 * 60);
  EXPECT_EQ(bench_cooldown(kBase, 3), 120 * 60);
  EXPECT_EQ(bench_cooldown(kBase, 6), 16 * 3600);
  EXPECT_EQ(bench_cooldown(kBase, 7), kMaxBenchCooldown);
  EXPECT_EQ(bench_cooldown(kBase, 1'000'000), kMaxBenchCooldown);
  EXPECT_EQ(bench_cooldown(2 * kMaxBenchCooldown, 1), kMaxBenchCooldown);
}

TEST(MergeBenched, ANewHostIsBenchedOnceForTheBaseCooldown) {
  BenchRecord record;
  merge_benched(record, {{"node2", "health check failed"}}, kNow, kBase);
  ASSERT_EQ(record.hosts.size(), 1u);
  const BenchEntry& entry = record.hosts[0];
  EXPECT_EQ(entry.host, "node2");
  EXPECT_EQ(entry.times, 1);
  EXPECT_EQ(entry.last_benched, kNow);
  EXPECT_EQ(entry.why, "health check failed");
  EXPECT_EQ(entry.excluded_until, kNow + kBase);
  EXPECT_FALSE(entry.added_by_dlaunch);
}

TEST(MergeBenched, AHostBenchedAgainCoolsDownTwiceAsLongAndKeepsTheLastReason) {
  BenchRecord record;
  merge_benched(record, {{"node2", "first"}}, kNow, kBase);
  merge_benched(record, {{"node2", "second\nline"}}, kNow + 100, kBase);
  ASSERT_EQ(record.hosts.size(), 1u);
  EXPECT_EQ(record.hosts[0].times, 2);
  EXPECT_EQ(record.hosts[0].why, "second line");
  EXPECT_EQ(record.hosts[0].excluded_until, kNow + 100 + 2 * kBase);
}

TEST(MergeBenched, AHostFineForADayAfterItsCooldownStartsOver) {
  BenchRecord record;
  merge_benched(record, {{"node2", "first"}}, kNow, kBase);
  merge_benched(record, {{"node3", "other"}}, kNow + kBase + kMaxBenchCooldown + 1, kBase);
  EXPECT_EQ(hosts_of(record.hosts), std::vector<std::string>({"node3"}));
  const std::int64_t later = kNow + kBase + kMaxBenchCooldown + 2;
  merge_benched(record, {{"node2", "again"}}, later, kBase);
  EXPECT_EQ(record.hosts.back().times, 1);
  EXPECT_EQ(record.hosts.back().excluded_until, later + kBase);
}

TEST(InCooldown, AnExpiredHostIsNoLongerExcluded) {
  BenchRecord record;
  merge_benched(record, {{"node2", "a"}, {"node3", "b"}}, kNow, kBase);
  merge_benched(record, {{"node3", "b"}}, kNow, kBase);  // node3: twice, an hour
  EXPECT_EQ(hosts_of(in_cooldown(record, kNow + kBase - 1)), std::vector<std::string>({"node2", "node3"}));
  EXPECT_EQ(hosts_of(in_cooldown(record, kNow + kBase)), std::vector<std::string>({"node3"}));
  EXPECT_TRUE(in_cooldown(record, kNow + 2 * kBase).empty());
}

TEST(PlanExclusion, AddsTheHostsInCooldownAndKeepsTheUsersOwn) {
  BenchRecord record;
  merge_benched(record, {{"node2", "a"}}, kNow, kBase);
  Exclusion exclusion = plan_exclusion(record, {"node7", "node8"}, kNow + 1);
  EXPECT_EQ(exclusion.hosts, std::vector<std::string>({"node7", "node8", "node2"}));
  EXPECT_EQ(exclusion.added, std::vector<std::string>({"node2"}));
  EXPECT_TRUE(exclusion.released.empty());
  EXPECT_TRUE(exclusion.changed());
}

TEST(PlanExclusion, OnceTheCooldownIsOverDlaunchsOwnExclusionGoesAndTheUsersStays) {
  BenchRecord record;
  merge_benched(record, {{"node2", "a"}, {"node7", "b"}}, kNow, kBase);
  // node7 was excluded by the user already: it is not dlaunch's to add.
  Exclusion first = plan_exclusion(record, {"node7"}, kNow + 1);
  EXPECT_EQ(first.added, std::vector<std::string>({"node2"}));
  note_exclusion(record, first);
  EXPECT_TRUE(record.hosts[0].added_by_dlaunch);
  EXPECT_FALSE(record.hosts[1].added_by_dlaunch);

  Exclusion later = plan_exclusion(record, first.hosts, kNow + kBase);
  EXPECT_EQ(later.hosts, std::vector<std::string>({"node7"}));
  EXPECT_EQ(later.released, std::vector<std::string>({"node2"}));
  EXPECT_TRUE(later.added.empty());
  note_exclusion(record, later);
  EXPECT_FALSE(record.hosts[0].added_by_dlaunch);
}

TEST(PlanExclusion, NothingToChangeWhenTheHostsAreExcludedAlready) {
  BenchRecord record;
  merge_benched(record, {{"node2", "a"}}, kNow, kBase);
  note_exclusion(record, plan_exclusion(record, {}, kNow));
  Exclusion again = plan_exclusion(record, {"node2"}, kNow + 1);
  EXPECT_FALSE(again.changed());
  EXPECT_EQ(again.hosts, std::vector<std::string>({"node2"}));
}

TEST(BenchRecordFile, RoundTrips) {
  BenchRecord record;
  // In host name order: the file keeps its hosts as a JSON object, sorted.
  merge_benched(record, {{"gpu-a.example", "gate"}, {"node2", "health check 'x' failed"}}, kNow, kBase);
  note_exclusion(record, plan_exclusion(record, {}, kNow));
  BenchRecord back = parse_bench_record(bench_record_json(record), "f");
  ASSERT_EQ(back.hosts.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(back.hosts[i].host, record.hosts[i].host);
    EXPECT_EQ(back.hosts[i].last_benched, record.hosts[i].last_benched);
    EXPECT_EQ(back.hosts[i].times, record.hosts[i].times);
    EXPECT_EQ(back.hosts[i].why, record.hosts[i].why);
    EXPECT_EQ(back.hosts[i].excluded_until, record.hosts[i].excluded_until);
    EXPECT_EQ(back.hosts[i].added_by_dlaunch, record.hosts[i].added_by_dlaunch);
  }
}

TEST(BenchRecordFile, AGarbledFileIsRefusedInOneLineNamingIt) {
  const std::string prefix = "the bench record /sub/bench-record.json is not usable: ";
  for (const std::string& text :
       {std::string("{\"hosts\": {"), std::string(""), std::string("[1,2]"), std::string("{\"hosts\": []}"),
        std::string(100000, '['),
        std::string(R"({"hosts": {"node2": {"last_benched": "yesterday", "times": 1, "excluded_until": 5}}})"),
        std::string(R"({"hosts": {"node2": {"last_benched": 1, "times": 0, "excluded_until": 5}}})"),
        std::string(R"({"hosts": {"node2": {"last_benched": 1, "times": 1, "excluded_until": -5}}})"),
        std::string(R"({"hosts": {"node2": {"last_benched": 1, "times": 1, "excluded_until": 5, "why": 3}}})"),
        std::string(R"({"hosts": {"node2": {"last_benched": 1, "times": 1, "excluded_until": 5,
                       "added_by_dlaunch": "yes"}}})"),
        std::string(R"({"hosts": {"node2": 7}})")}) {
    const std::string error = error_of(text);
    EXPECT_EQ(error.rfind(prefix, 0), 0u) << text.substr(0, 100) << " gave: " << error;
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  }
}

TEST(BenchRecordFile, AHostileHostNameCannotWidenTheExclusion) {
  // A name with a bracket or a comma would name other hosts in ExcNodeList.
  for (const char* name : {"node[1-1000]", "a,b", "", "node 2", "-x"}) {
    const std::string text = std::string(R"({"hosts": {")") + name +
                             R"(": {"last_benched": 1, "times": 1, "excluded_until": 5}}})";
    const std::string error = error_of(text);
    if (std::string(name) == "-x") {
      EXPECT_EQ(error, "(accepted)");  // a valid, if odd, node name: it is one word of a list
      continue;
    }
    EXPECT_NE(error.find("is no Slurm node name"), std::string::npos) << name << ": " << error;
  }
}

TEST(BenchRecordFile, AHugeFileOrTooManyHostsIsRefused) {
  std::string huge = R"({"hosts": {}, "pad": ")" + std::string(kMaxBenchRecordBytes, 'x') + "\"}";
  EXPECT_NE(error_of(huge).find("more than the"), std::string::npos) << error_of(huge).substr(0, 200);
  std::string many = R"({"hosts": {)";
  for (std::size_t i = 0; i <= kMaxBenchRecordHosts; ++i) {
    if (i > 0) many += ',';
    many += "\"n" + std::to_string(i) + R"(": {"last_benched": 1, "times": 1, "excluded_until": 5})";
  }
  many += "}}";
  EXPECT_NE(error_of(many).find("hosts, more than"), std::string::npos) << error_of(many).substr(0, 200);
}

TEST(BenchRecordFile, AVeryLongReasonIsCut) {
  BenchRecord record;
  merge_benched(record, {{"node2", std::string(5000, 'w')}}, kNow, kBase);
  EXPECT_LE(record.hosts[0].why.size(), 300u);
}

}  // namespace
}  // namespace dlaunch::slurm
