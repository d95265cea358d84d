// The records a run leaves in its log folder (which host ran each node rank,
// the job's result), and what a launcher the job left behind reads from
// them before it acts for the job again.
#include "launch/run_record.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <iterator>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../test_support/files.h"
#include "../test_support/temp_dir.h"
#include "../test_support/text.h"

namespace dlaunch::launch {
namespace {

using test_support::contains;

const std::string kThisJob = "incarnation-a";
const std::string kEarlierJob = "incarnation-b";  // an earlier run in the same folder

nlohmann::json read_json(const std::string& path) {
  std::ifstream file(path);
  return nlohmann::json::parse(file, nullptr, false);
}

using test_support::write_file;

// Two nodes of two workers each; NODE_SLOTS says which launcher holds
// each node rank in ROUND.
rendezvous::World world_of(int round, const std::string& incarnation, std::vector<int> node_slots) {
  rendezvous::World world;
  world.round = round;
  world.incarnation = incarnation;
  world.node_slots = std::move(node_slots);
  world.nproc_per_node.assign(world.node_slots.size(), 2);
  return world;
}

rendezvous::Verdict succeeded() { return rendezvous::Verdict{}; }

rendezvous::Verdict failed_with(int exit_code) {
  rendezvous::Verdict verdict;
  verdict.kind = rendezvous::Verdict::Kind::kFailed;
  verdict.exit_code = exit_code;
  return verdict;
}

std::string write_result(const std::string& log_root, const rendezvous::Verdict& verdict, const std::string& host,
                         const std::string& incarnation = kThisJob, int round = 0) {
  return write_run_result(log_root, RunResult{verdict, round, "", "2026-12-04T10:00:00", incarnation, host});
}

// The launcher on HOST, node rank 1 in slot 1 in round 0, that was cut off.
rendezvous::LauncherPlace cut_off(const std::string& host = "h1") {
  return rendezvous::LauncherPlace{kThisJob, 0, 1, 1, host};
}

// --- node records and the job's result ---

TEST(NodeRecord, NamesTheHostItsRanksTheRoundTheSlotAndTheJob) {
  test_support::TempDir dir;
  ASSERT_EQ(write_node_record(dir.path(), world_of(2, kThisJob, {0, 3}), 1, "h3"), "");
  auto record = read_json(dir.path() + "/attempt_2/node1.json");
  EXPECT_EQ(record["node_rank"], 1);
  EXPECT_EQ(record["host"], "h3");
  EXPECT_EQ(record["ranks"], nlohmann::json({2, 3}));
  EXPECT_EQ(record["round"], 2);
  EXPECT_EQ(record["slot"], 3);
  EXPECT_EQ(record["job"], kThisJob);
}

TEST(RunResult, RecordsTheVerdictItsRoundAndWhoWroteIt) {
  test_support::TempDir dir;
  rendezvous::Verdict verdict = failed_with(3);
  verdict.timeline = {"node 1 (h1) lost", "h3 took its place"};
  ASSERT_EQ(write_result(dir.path(), verdict, "h0", kThisJob, 2), "");
  auto result = read_json(dir.path() + "/result.json");
  EXPECT_EQ(result["state"], "FAILED");
  EXPECT_EQ(result["exit_code"], 3);
  EXPECT_EQ(result["restarts"], 2);
  EXPECT_EQ(result["written_by"], "h0");
  EXPECT_EQ(result["job"], kThisJob);
  EXPECT_EQ(result["timeline"], nlohmann::json({"node 1 (h1) lost", "h3 took its place"}));
}

// A launcher that lost node 0 decided alone; node 0's service, when it
// is still there, knew the whole job and wrote first: its result stays.
TEST(RunResult, AVerdictMadeAloneDoesNotReplaceAResultAlreadyThere) {
  test_support::TempDir dir;
  ASSERT_EQ(write_result(dir.path(), succeeded(), "h0"), "");
  rendezvous::Verdict alone = failed_with(1);
  alone.decided_here = true;
  EXPECT_EQ(write_result(dir.path(), alone, "h1"), "") << "keeping the earlier result is no error";
  auto result = read_json(dir.path() + "/result.json");
  EXPECT_EQ(result["state"], "COMPLETED");
  EXPECT_EQ(result["written_by"], "h0");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), std::filesystem::directory_iterator()), 1)
      << "a temporary was left beside result.json";
}

TEST(RunResult, AVerdictMadeAloneIsWrittenWhereNoResultIs) {
  test_support::TempDir dir;
  rendezvous::Verdict alone = failed_with(1);
  alone.decided_here = true;
  ASSERT_EQ(write_result(dir.path() + "/logs", alone, "h1"), "");
  auto result = read_json(dir.path() + "/logs/result.json");
  EXPECT_EQ(result["state"], "FAILED");
  EXPECT_EQ(result["written_by"], "h1");
}

TEST(RunResult, AServicesVerdictReplacesAnEarlierResult) {
  test_support::TempDir dir;
  rendezvous::Verdict alone = failed_with(1);
  alone.decided_here = true;
  ASSERT_EQ(write_result(dir.path(), alone, "h1"), "");
  ASSERT_EQ(write_result(dir.path(), succeeded(), "h0"), "");
  auto result = read_json(dir.path() + "/result.json");
  EXPECT_EQ(result["state"], "COMPLETED");
  EXPECT_EQ(result["exit_code"], 0);
  EXPECT_EQ(result["written_by"], "h0");
}

// A record is not the job: a folder that cannot be written is reported,
// and the launcher goes on.
TEST(RunResult, AFolderThatCannotBeWrittenIsReportedNotThrown) {
  test_support::TempDir dir;
  write_file(dir.path() + "/a file", "");
  const std::string log_root = dir.path() + "/a file/logs";
  EXPECT_TRUE(contains(write_result(log_root, succeeded(), "h0"), log_root));
  rendezvous::Verdict alone = failed_with(1);
  alone.decided_here = true;
  EXPECT_TRUE(contains(write_result(log_root, alone, "h1"), log_root));
}

TEST(NoteSlurmEnd, AddsHowTheSlurmJobWasEndedAndKeepsTheVerdict) {
  test_support::TempDir dir;
  ASSERT_EQ(write_result(dir.path(), succeeded(), "h2"), "");
  ASSERT_EQ(note_slurm_end(dir.path(), kThisJob, "cancelled by dlaunch: the batch host h0 was lost"), "");
  auto result = read_json(dir.path() + "/result.json");
  EXPECT_EQ(result["slurm_end"], "cancelled by dlaunch: the batch host h0 was lost");
  EXPECT_EQ(result["state"], "COMPLETED");
  EXPECT_EQ(result["written_by"], "h2");
}

TEST(NoteSlurmEnd, WithoutAResultOfThisJobItSaysSo) {
  test_support::TempDir dir;
  EXPECT_TRUE(contains(note_slurm_end(dir.path(), kThisJob, "cancelled by dlaunch"), dir.path() + "/result.json"));
  write_file(dir.path() + "/result.json", "{\"state\": ");  // cut short
  EXPECT_TRUE(contains(note_slurm_end(dir.path(), kThisJob, "cancelled by dlaunch"), "no result of this job"));
  // An earlier run's result in the same folder is not this job's.
  ASSERT_EQ(write_result(dir.path(), succeeded(), "h2", "an earlier job"), "");
  EXPECT_TRUE(contains(note_slurm_end(dir.path(), kThisJob, "cancelled by dlaunch"), "no result of this job"));
  EXPECT_FALSE(read_json(dir.path() + "/result.json").contains("slurm_end"));
}

// --log-dir reused: the result of an earlier run is no reason to keep this
// job's verdict out, even one made alone.
TEST(RunResult, AVerdictMadeAloneReplacesAnEarlierJobsResult) {
  test_support::TempDir dir;
  ASSERT_EQ(write_result(dir.path(), succeeded(), "h0", "an earlier job"), "");
  rendezvous::Verdict alone = failed_with(1);
  alone.decided_here = true;
  ASSERT_EQ(write_result(dir.path(), alone, "h1"), "");
  auto result = read_json(dir.path() + "/result.json");
  EXPECT_EQ(result["state"], "FAILED");
  EXPECT_EQ(result["job"], kThisJob);
}

// Both sides of a cut see the other go silent: the record keeps both.
TEST(RunResult, TheOtherSideOfACutIsKeptAsAlsoSeen) {
  test_support::TempDir dir;
  rendezvous::Failure node0_lost;
  node0_lost.node_rank = 0;
  node0_lost.description = "node 0 (h0:29500) sent nothing for 3 s";
  rendezvous::Verdict alone = failed_with(1);
  alone.decided_here = true;
  alone.failure = node0_lost;
  ASSERT_EQ(write_result(dir.path(), alone, "h1"), "");
  // Node 0's service, cut off, decided too: its verdict replaces the one
  // made alone, which stays as what h1 saw.
  rendezvous::Failure node1_lost;
  node1_lost.node_rank = 1;
  node1_lost.description = "node 1 (h1) sent nothing for 3 s";
  rendezvous::Verdict service = failed_with(1);
  service.failure = node1_lost;
  ASSERT_EQ(write_result(dir.path(), service, "h0"), "");
  auto result = read_json(dir.path() + "/result.json");
  EXPECT_EQ(result["failure"], "node 1 (h1) sent nothing for 3 s");
  EXPECT_EQ(result["also_seen"], nlohmann::json({"h1: node 0 (h0:29500) sent nothing for 3 s"}));
  // The other order: the one made alone, second, adds itself.
  test_support::TempDir other;
  ASSERT_EQ(write_result(other.path(), service, "h0"), "");
  ASSERT_EQ(write_result(other.path(), alone, "h1"), "");
  auto kept = read_json(other.path() + "/result.json");
  EXPECT_EQ(kept["written_by"], "h0");
  EXPECT_EQ(kept["also_seen"], nlohmann::json({"h1: node 0 (h0:29500) sent nothing for 3 s"}));
}

// --- job_moved_on: what a launcher that comes back reads ---

TEST(JobMovedOn, NothingRecordedIsNothingToSay) {
  test_support::TempDir dir;
  EXPECT_EQ(job_moved_on(dir.path(), cut_off()), std::nullopt);
  EXPECT_EQ(job_moved_on(dir.path() + "/never made", cut_off()), std::nullopt);
  EXPECT_EQ(job_moved_on("", cut_off()), std::nullopt);
  // Its own round's records are the ones it knew of.
  ASSERT_EQ(write_node_record(dir.path(), world_of(0, kThisJob, {0, 1}), 1, "h1"), "");
  EXPECT_EQ(job_moved_on(dir.path(), cut_off()), std::nullopt);
}

TEST(JobMovedOn, AResultOfThisJobSaysItWasDecidedAndByWhom) {
  test_support::TempDir dir;
  ASSERT_EQ(write_result(dir.path(), succeeded(), "h2"), "");
  EXPECT_EQ(job_moved_on(dir.path(), cut_off("h1")),
            "the job was decided while this launcher (h1) was unreachable: COMPLETED with exit code 0, by the "
            "launcher on h2");
}

TEST(JobMovedOn, AResultWithoutItsWriterOrCodeStillSaysTheJobWasDecided) {
  test_support::TempDir dir;
  write_file(dir.path() + "/result.json", R"({"job": "incarnation-a", "state": "FAILED"})");
  EXPECT_EQ(job_moved_on(dir.path(), cut_off("h1")),
            "the job was decided while this launcher (h1) was unreachable: FAILED");
}

// Node 0's launcher killed with no spare: every other launcher loses it at
// once and decides alone. The first to write is no sign that the others
// were left behind: they decide too, and say what they saw.
TEST(JobMovedOn, AVerdictAnotherLauncherMadeAloneInThisRoundIsNoSignOfBeingLeftBehind) {
  test_support::TempDir dir;
  auto alone = failed_with(1);
  alone.decided_here = true;
  ASSERT_EQ(write_result(dir.path(), alone, "h2"), "");
  EXPECT_EQ(read_json(dir.path() + "/result.json")["decided_alone"], true);
  EXPECT_EQ(job_moved_on(dir.path(), cut_off("h1")), std::nullopt);
  // But node 0 itself, frozen and thawed, was the one they lost.
  rendezvous::LauncherPlace old_node0{kThisJob, 0, 0, 0, "h0"};
  EXPECT_EQ(job_moved_on(dir.path(), old_node0),
            "the job was decided while this launcher (h0) was unreachable: FAILED with exit code 1, by the "
            "launcher on h2");
}

// Made alone, but in a round after this launcher's: the job went on
// without it first.
TEST(JobMovedOn, AVerdictMadeAloneInALaterRoundSaysTheJobWasDecided) {
  test_support::TempDir dir;
  auto alone = failed_with(1);
  alone.decided_here = true;
  ASSERT_EQ(write_result(dir.path(), alone, "h2", kThisJob, 1), "");
  EXPECT_EQ(job_moved_on(dir.path(), cut_off("h1")),
            "the job was decided while this launcher (h1) was unreachable: FAILED with exit code 1, by the "
            "launcher on h2");
}

// The same log folder holds an earlier run's records: they say nothing of
// this job.
TEST(JobMovedOn, RecordsOfAnotherIncarnationAreIgnored) {
  test_support::TempDir dir;
  ASSERT_EQ(write_result(dir.path(), succeeded(), "h2", kEarlierJob), "");
  ASSERT_EQ(write_node_record(dir.path(), world_of(1, kEarlierJob, {0, 2}), 0, "h0"), "");
  ASSERT_EQ(write_node_record(dir.path(), world_of(1, kEarlierJob, {0, 2}), 1, "h3"), "");
  EXPECT_EQ(job_moved_on(dir.path(), cut_off()), std::nullopt);
}

TEST(JobMovedOn, ASpareInThisNodesPlaceSaysWhoReplacedIt) {
  test_support::TempDir dir;
  auto next_round = world_of(1, kThisJob, {0, 2});  // slot 2, a spare, holds node rank 1
  ASSERT_EQ(write_node_record(dir.path(), next_round, 0, "h0"), "");
  ASSERT_EQ(write_node_record(dir.path(), next_round, 1, "h3"), "");
  EXPECT_EQ(job_moved_on(dir.path(), cut_off("h1")),
            "this node (h1, node rank 1) was replaced by h3 (slot 2) in round 1 while it was unreachable");
}

// The job shrank (--min-nodes) or this node's record is not written yet:
// that the job is in a later round is enough.
TEST(JobMovedOn, ALaterRoundWithoutThisNodeRankSaysTheJobWentOn) {
  test_support::TempDir dir;
  ASSERT_EQ(write_node_record(dir.path(), world_of(1, kThisJob, {0}), 0, "h0"), "");
  EXPECT_EQ(job_moved_on(dir.path(), cut_off("h1")),
            "the job went on to round 1 without this launcher (h1) while it was unreachable");
}

TEST(JobMovedOn, ASpareThatWasCutOffHearsThatTheJobWentOn) {
  test_support::TempDir dir;
  ASSERT_EQ(write_node_record(dir.path(), world_of(3, kThisJob, {0, 1}), 0, "h0"), "");
  rendezvous::LauncherPlace spare{kThisJob, 2, std::nullopt, 2, "h2"};
  EXPECT_EQ(job_moved_on(dir.path(), spare),
            "the job went on to round 3 without this launcher (h2) while it was unreachable");
}

// A file cut short by a full disk, or written by hand, is no record; it
// must not throw in a launcher that is deciding whether to take over.
TEST(JobMovedOn, GarbageRecordsDoNotThrow) {
  test_support::TempDir dir;
  write_file(dir.path() + "/result.json", "{\"job\": \"incarnation-a\", \"sta");
  write_file(dir.path() + "/attempt_1/node0.json", "not json");
  write_file(dir.path() + "/attempt_1/node1.json", "[\"incarnation-a\"]");
  EXPECT_EQ(job_moved_on(dir.path(), cut_off()), std::nullopt);

  // A readable record of the round beside a garbage one for this rank: the
  // job went on, and nobody is named as this node's successor.
  ASSERT_EQ(write_node_record(dir.path(), world_of(1, kThisJob, {0, 2}), 0, "h0"), "");
  EXPECT_EQ(job_moved_on(dir.path(), cut_off("h1")),
            "the job went on to round 1 without this launcher (h1) while it was unreachable");
}

// A shared or damaged log folder (issue 24): a FIFO, a device or JSON
// nested a million deep where a record belongs is no record, read at once.
TEST(JobMovedOn, HostileRecordsAreNoRecordsAndNeverHang) {
  test_support::TempDir dir;
  ASSERT_EQ(::mkfifo((dir.path() + "/result.json").c_str(), 0600), 0);
  std::filesystem::create_directories(dir.path() + "/attempt_1");
  ASSERT_EQ(::symlink("/dev/zero", (dir.path() + "/attempt_1/node0.json").c_str()), 0);
  write_file(dir.path() + "/attempt_1/node1.json", std::string(1'500'000, '['));
  EXPECT_EQ(job_moved_on(dir.path(), cut_off()), std::nullopt);
}

// --- what dlaunch added after the verdict, and how a code reads ---

TEST(SlurmEnd, IsAddedToThisJobsResultOnly) {
  test_support::TempDir dir;
  ASSERT_EQ(write_result(dir.path(), failed_with(1), "h0"), "");
  EXPECT_EQ(note_slurm_end(dir.path(), kThisJob, "cancelled by dlaunch after the verdict"), "");
  auto result = read_json(dir.path() + "/result.json");
  EXPECT_EQ(result["slurm_end"], "cancelled by dlaunch after the verdict");
  EXPECT_EQ(result["state"], "FAILED") << "the rest of the result stays";

  std::string error = note_slurm_end(dir.path(), kEarlierJob, "cancelled");
  EXPECT_TRUE(contains(error, "it holds no result of this job")) << error;
  EXPECT_EQ(read_json(dir.path() + "/result.json")["slurm_end"], "cancelled by dlaunch after the verdict");
}

TEST(SlurmEnd, WithoutAResultThereIsNothingToAddTo) {
  test_support::TempDir dir;
  std::string error = note_slurm_end(dir.path(), kThisJob, "cancelled");
  EXPECT_TRUE(contains(error, "cannot add to " + dir.path() + "/result.json")) << error;
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/result.json"));
}

TEST(JobMovedOn, AVerdictOfASignalNamesTheSignal) {
  test_support::TempDir dir;
  ASSERT_EQ(write_result(dir.path(), failed_with(137), "h0"), "");
  EXPECT_EQ(job_moved_on(dir.path(), cut_off()),
            "the job was decided while this launcher (h1) was unreachable: FAILED with exit code 137 (SIGKILL), by "
            "the launcher on h0");
}

}  // namespace
}  // namespace dlaunch::launch
