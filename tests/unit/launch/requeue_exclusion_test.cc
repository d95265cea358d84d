// Node 0's requeue with the benched hosts kept out: the reasons read from
// the timeline, and the scontrol calls in Slurm's order (requeue, then
// update, as Slurm refuses ExcNodeList for a running job) against a fake
// scontrol first in PATH. Nothing but a failed requeue stops it.
#include "launch/requeue_exclusion.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "util/error.h"

namespace dlaunch::launch {
namespace {

namespace fs = std::filesystem;

constexpr std::int64_t kNow = 1'800'000'000;

std::string read(const fs::path& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

TEST(BenchReason, ReadsEachKindOfBenchingFromTheTimeline) {
  const std::vector<std::string> timeline = {
      "node 1 (node2) lost",
      "gate: node3 (slot 2) benched: 3.1 Gb/s to every peer, the others 90",
      "health check: node2 (slot 1) benched: health check '--health-check ./c' failed on node2: it exited with 1",
      "node 0 (node4) failed 3 rounds in a row (--node-fail-limit 3): it is benched",
      "node 1 (node5.cluster) had a GPU hardware error (GPU hardware error): it is benched",
      "node 1 (node6) was lost 2 times in this job; it is benched and another launcher takes its place",
      "node 2 (node66) was lost 2 times in this job; it is benched and another launcher takes its place",
  };
  EXPECT_EQ(bench_reason(timeline, 2, "node3"), "pre-start gate: 3.1 Gb/s to every peer, the others 90");
  EXPECT_EQ(bench_reason(timeline, 1, "node2"), "health check '--health-check ./c' failed on node2: it exited with 1");
  EXPECT_EQ(bench_reason(timeline, 3, "node4"), "failed 3 rounds in a row (--node-fail-limit 3)");
  EXPECT_EQ(bench_reason(timeline, 4, "node5"), "had a GPU hardware error (GPU hardware error)");
  EXPECT_EQ(bench_reason(timeline, 5, "node6"), "was lost 2 times in this job");
  EXPECT_EQ(bench_reason(timeline, 9, "node9"), "benched (node 0's timeline says why)");
}

TEST(BenchedHosts, NamesTheBenchedSlotsBySlurmsHosts) {
  rendezvous::World world;
  world.benched_slots = {2, 9};  // slot 9: no host known, left out
  auto hosts = benched_hosts(world, {"health check: x (slot 2) benched: health check 'disk' failed"},
                             {"node1", "node2", "node3"});
  ASSERT_EQ(hosts.size(), 1u);
  EXPECT_EQ(hosts[0].host, "node3");
  EXPECT_EQ(hosts[0].why, "health check 'disk' failed");
}

class RequeueExclusion : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    previous_path_ = std::getenv("PATH");
    ::setenv("PATH", (dir_.string() + ":" + previous_path_).c_str(), 1);
    // Every call is one line of calls; `show job` prints the job with the
    // ExcNodeList in the file exc; update fails when update_fails exists,
    // requeue when requeue_fails does.
    const std::string d = dir_.string();
    std::ofstream(dir_ / "scontrol")
        << "#!/bin/sh\n"
        << "echo \"$*\" >> '" << d << "/calls'\n"
        << "case $1 in\n"
        << "show) echo \"JobId=42 JobName=t JobState=RUNNING ExcNodeList=$(cat '" << d << "/exc') Restarts=0\" ;;\n"
        << "requeue) if [ -e '" << d << "/requeue_fails' ]; then echo 'scontrol: error: Requested operation is "
        << "presently disabled for job 42' >&2; exit 1; fi ;;\n"
        << "update) if [ -e '" << d << "/update_fails' ]; then echo 'scontrol: error: Invalid node name "
        << "specified for job 42' >&2; exit 1; fi ;;\n"
        << "esac\n";
    fs::permissions(dir_ / "scontrol", fs::perms::owner_all);
    set_exclusion("(null)");
  }
  void TearDown() override {
    ::setenv("PATH", previous_path_.c_str(), 1);
    fs::remove_all(dir_);
  }
  void set_exclusion(const std::string& list) { std::ofstream(dir_ / "exc") << list; }
  std::vector<std::string> calls() const {
    std::vector<std::string> lines;
    std::istringstream text(read(dir_ / "calls"));
    for (std::string line; std::getline(text, line);) lines.push_back(line);
    return lines;
  }
  RequeueRequest request(std::vector<slurm::BenchedHost> benched, std::int64_t now = kNow) {
    RequeueRequest r;
    r.job_id = "42";
    r.record_path = record_.string();
    r.cooldown_s = 1800;
    r.benched = std::move(benched);
    r.now = now;
    return r;
  }
  std::vector<std::string> run(const RequeueRequest& r) {
    std::vector<std::string> said;
    ::unlink((dir_ / "calls").c_str());
    requeue_excluding_benched(r, [&](const std::string& line) { said.push_back(line); });
    return said;
  }
  slurm::BenchRecord record() const { return slurm::parse_bench_record(read(record_), record_.string()); }

  fs::path dir_ = fs::path(::testing::TempDir()) / ("dlaunch_requeue_exclusion_" + std::to_string(::getpid()));
  fs::path record_ = dir_ / "bench-record.json";
  std::string previous_path_;
};

TEST_F(RequeueExclusion, RequeuesThenExcludesTheBenchedHostKeepingTheUsersOwn) {
  set_exclusion("node[7-8]");
  auto said = run(request({{"node2", "health check 'x' failed on node2: it exited with 1"}}));
  ASSERT_EQ(said.size(), 1u);
  EXPECT_EQ(said[0].rfind("dlaunch: the workers exited after the preemption signal; requeueing job 42 without "
                          "node2 (benched: health check 'x' failed on node2: it exited with 1; excluded until ",
                          0),
            0u)
      << said[0];
  EXPECT_NE(said[0].find(", cooldown 30 min)"), std::string::npos) << said[0];
  const auto made = calls();
  ASSERT_EQ(made.size(), 3u);
  EXPECT_EQ(made[0], "show job -o -- 42");
  EXPECT_EQ(made[1], "requeue -- 42");  // before the update: Slurm refuses it for a running job
  EXPECT_EQ(made[2], "update JobId=42 ExcNodeList=node[7-8,2]");
  auto kept = record();
  ASSERT_EQ(kept.hosts.size(), 1u);
  EXPECT_EQ(kept.hosts[0].host, "node2");
  EXPECT_EQ(kept.hosts[0].excluded_until, kNow + 1800);
  EXPECT_TRUE(kept.hosts[0].added_by_dlaunch);
}

TEST_F(RequeueExclusion, ASecondBenchingDoublesTheCooldownAndAnExpiredHostIsGivenBack) {
  run(request({{"node2", "a"}}));
  set_exclusion("node2");
  auto said = run(request({{"node2", "b"}}, kNow + 60));
  EXPECT_NE(said[0].find("cooldown 1 h)"), std::string::npos) << said[0];
  EXPECT_EQ(record().hosts[0].times, 2);
  EXPECT_EQ(record().hosts[0].excluded_until, kNow + 60 + 3600);
  EXPECT_EQ(calls().size(), 2u) << "nothing to update: node2 is excluded already";

  // After the cooldown, a run that benched nothing gives node2 back and
  // leaves the user's node7 where it was.
  set_exclusion("node[2,7]");
  said = run(request({}, kNow + 60 + 3600));
  ASSERT_EQ(said.size(), 2u);
  EXPECT_EQ(said[0], "dlaunch: the workers exited after the preemption signal; requeueing job 42");
  EXPECT_EQ(said[1], "dlaunch: node2's cooldown is over: the requeued job may run on it again");
  EXPECT_EQ(calls().back(), "update JobId=42 ExcNodeList=node7");
  EXPECT_FALSE(record().hosts[0].added_by_dlaunch);
}

TEST_F(RequeueExclusion, AGarbledRecordCostsOneLineNamingItAndTheRequeueGoesOn) {
  std::ofstream(record_) << "{\"hosts\": {\"node2\": {\"times\": \"many\"";
  auto said = run(request({{"node3", "gate"}}));
  ASSERT_EQ(said.size(), 2u);
  EXPECT_EQ(said[0].rfind("dlaunch: the bench record " + record_.string() + " is not usable: not JSON", 0), 0u)
      << said[0];
  EXPECT_EQ(said[0].find('\n'), std::string::npos);
  EXPECT_NE(said[1].find("requeueing job 42 without node3"), std::string::npos) << said[1];
  EXPECT_EQ(calls()[1], "requeue -- 42");
  EXPECT_EQ(record().hosts.size(), 1u) << "a new record replaced the garbled one";
}

TEST_F(RequeueExclusion, ARecordThatIsNoRegularFileIsNotFatal) {
  fs::create_directories(record_);
  auto said = run(request({{"node3", "gate"}}));
  ASSERT_GE(said.size(), 2u);
  EXPECT_NE(said[0].find(record_.string()), std::string::npos) << said[0];
  EXPECT_EQ(calls()[1], "requeue -- 42");
  EXPECT_NE(said.back().find("cannot write the record of benched hosts " + record_.string()), std::string::npos)
      << said.back();
}

TEST_F(RequeueExclusion, AHugeRecordIsRefusedUnreadAndTheRequeueGoesOn) {
  std::ofstream(record_) << "{\"hosts\": {}, \"x\": \"" << std::string(slurm::kMaxBenchRecordBytes, 'x') << "\"}";
  auto said = run(request({}));
  ASSERT_EQ(said.size(), 2u);
  EXPECT_NE(said[0].find(record_.string()), std::string::npos) << said[0];
  EXPECT_NE(said[0].find("starting a new one"), std::string::npos) << said[0];
  EXPECT_EQ(said[0].find('\n'), std::string::npos) << said[0];
  EXPECT_EQ(calls()[1], "requeue -- 42");
  EXPECT_LT(fs::file_size(record_), 1000u) << "a new, small record replaced it";
}

TEST_F(RequeueExclusion, AFailedUpdateIsSaidWithScontrolsWordsAndTheJobStaysRequeued) {
  std::ofstream(dir_ / "update_fails") << "";
  auto said = run(request({{"node2", "a"}}));
  ASSERT_EQ(said.size(), 2u);
  EXPECT_EQ(said[1],
            "dlaunch: job 42 is requeued, but without its exclusions: scontrol update JobId=42 ExcNodeList=node2 "
            "failed (exit 1): scontrol: error: Invalid node name specified for job 42. To keep the benched hosts "
            "out, run while it is pending: scontrol update JobId=42 ExcNodeList=node2");
  EXPECT_EQ(calls()[1], "requeue -- 42");
  EXPECT_FALSE(record().hosts[0].added_by_dlaunch) << "not excluded, so not dlaunch's to remove later";
}

TEST_F(RequeueExclusion, AFailedRequeueThrowsAndTheRecordIsStillKept) {
  std::ofstream(dir_ / "requeue_fails") << "";
  EXPECT_THROW(run(request({{"node2", "a"}})), util::SystemError);
  for (const auto& call : calls()) EXPECT_EQ(call.rfind("update", 0), std::string::npos) << call;
  EXPECT_EQ(record().hosts.size(), 1u);
}

TEST_F(RequeueExclusion, WithoutARecordItIsThePlainRequeue) {
  RequeueRequest plain = request({{"node2", "a"}});
  plain.record_path.reset();
  auto said = run(plain);
  EXPECT_EQ(said, std::vector<std::string>(
                      {"dlaunch: the workers exited after the preemption signal; requeueing job 42"}));
  EXPECT_EQ(calls(), std::vector<std::string>({"requeue -- 42"}));
  EXPECT_FALSE(fs::exists(record_));
}

}  // namespace
}  // namespace dlaunch::launch
