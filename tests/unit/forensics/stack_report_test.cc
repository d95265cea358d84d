#include "forensics/stack_report.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "forensics/stack_sample.h"
#include "util/error.h"

namespace dlaunch::forensics {
namespace {

WorkerStacks python_worker(int rank, const std::string& host, std::vector<std::string> functions) {
  WorkerStacks worker;
  worker.rank = rank;
  worker.local_rank = rank % 2;
  worker.node_rank = rank / 2;
  worker.host = host;
  worker.pid = 1000 + rank;
  ThreadStack thread;
  thread.thread = "0x1";
  thread.main_thread = true;
  for (auto& function : functions) thread.frames.push_back({function, "train.py", 1, ""});
  worker.python_threads.push_back(thread);
  ThreadStack native;
  native.thread = std::to_string(worker.pid);
  native.main_thread = true;
  native.frames.push_back({"Py_BytesMain", "/usr/bin/python3.11", 0, "0x10"});
  worker.native_threads.push_back(native);
  return worker;
}

std::vector<WorkerStacks> one_rank_stuck_elsewhere() {
  std::vector<WorkerStacks> workers;
  for (int rank : {3, 0, 1, 2}) {  // out of order on purpose
    std::string host = rank < 2 ? "node1" : "node2";
    if (rank == 2) workers.push_back(python_worker(rank, host, {"<module>", "train", "load_batch"}));
    else workers.push_back(python_worker(rank, host, {"<module>", "train", "all_reduce"}));
  }
  return workers;
}

TEST(MergeStacks, GroupsIdenticalStacksAndPutsTheOutlierFirst) {
  StackReport report = merge_stacks(one_rank_stuck_elsewhere());
  ASSERT_EQ(report.groups.size(), 2u);
  EXPECT_EQ(report.groups[0].ranks, (std::vector<int>{2}));
  EXPECT_EQ(report.groups[0].hosts, (std::vector<std::string>{"node2"}));
  EXPECT_EQ(report.groups[1].ranks, (std::vector<int>{0, 1, 3}));
  EXPECT_EQ(report.groups[1].hosts, (std::vector<std::string>{"node1", "node2"}));
  EXPECT_TRUE(report.groups[1].python);
  EXPECT_EQ(report.workers.front().rank, 0);
  EXPECT_EQ(group_line(report.groups[0]), "rank 2 (1) on node2: <module> > train > load_batch");
  EXPECT_EQ(group_line(report.groups[1]), "ranks 0-1,3 (3) on node1,node2: <module> > train > all_reduce");
  EXPECT_EQ(outlier_summary(report), "rank 2 on node2 differs");
}

TEST(MergeStacks, SaysWhenEveryRankIsInTheSamePlaceOrTheGroupsAreEven) {
  std::vector<WorkerStacks> same = {python_worker(0, "a", {"f"}), python_worker(1, "a", {"f"})};
  EXPECT_EQ(outlier_summary(merge_stacks(same)), "all 2 ranks are in the same place");
  std::vector<WorkerStacks> even = {python_worker(0, "a", {"f"}), python_worker(1, "a", {"g"})};
  EXPECT_EQ(outlier_summary(merge_stacks(even)), "the 2 ranks are split into 2 groups of equal size");
}

TEST(MergeStacks, UsesNativeFramesWhenThereAreNoPythonOnes) {
  WorkerStacks worker;
  worker.rank = 0;
  worker.host = "h";
  ThreadStack native;
  native.main_thread = true;
  native.frames = {{"main", "/bin/app", 0, "0x1"}, {"", "/usr/lib/libc.so.6", 0, "0x2"}};
  worker.native_threads.push_back(native);
  StackReport report = merge_stacks({worker});
  ASSERT_EQ(report.groups.size(), 1u);
  EXPECT_FALSE(report.groups[0].python);
  EXPECT_EQ(path_text(report.groups[0].path), "main > ?? (libc.so.6)");
}

TEST(MergeStacks, ARankWithoutAnyStackIsItsOwnGroup) {
  auto workers = one_rank_stuck_elsewhere();
  workers[0].python_threads.clear();
  workers[0].native_threads.clear();
  workers[0].problems.push_back("the worker had exited before its stack was captured");
  StackReport report = merge_stacks(workers);
  EXPECT_EQ(report.groups[0].ranks, (std::vector<int>{2}));
  EXPECT_EQ(group_line(report.groups[1]), "rank 3 (1) on node2: (no stack captured)");
  auto lines = short_report(report);
  EXPECT_EQ(lines.back(), "  (1 rank not captured in full: see the report file)");
}

TEST(CompressRanks, JoinsRunsAndKeepsSingles) {
  EXPECT_EQ(compress_ranks({}), "");
  EXPECT_EQ(compress_ranks({5}), "5");
  EXPECT_EQ(compress_ranks({0, 1, 3, 4, 5, 6, 7, 8, 9, 10, 11}), "0-1,3-11");
  EXPECT_EQ(compress_ranks({0, 2, 4}), "0,2,4");
}

TEST(PathText, CollapsesRecursionAndBoundsDeepStacks) {
  std::vector<std::string> deep = {"<module>", "main"};
  for (int i = 0; i < 50; ++i) deep.push_back("recurse");
  for (int i = 0; i < 20; ++i) deep.push_back(fmt::format("f{}", i));
  StackReport report = merge_stacks({python_worker(0, "a", deep)});
  const auto& path = report.groups[0].path;
  ASSERT_EQ(path.size(), 23u);  // 50 recursive calls are one step
  EXPECT_EQ(path[2].repeats, 50);
  EXPECT_EQ(path_text(path), "<module> > main > ... > f15 > f16 > f17 > f18 > f19");
  EXPECT_EQ(path_text(path, 100).find("recurse x50"), 18u);
}

TEST(FullReport, HoldsTheTreeAndEveryRanksThreads) {
  StackReport report = merge_stacks(one_rank_stuck_elsewhere());
  std::string text = full_report_text(report, "hang: no progress for 10 s");
  EXPECT_NE(text.find("  <module> [ranks 0-3]\n    train [ranks 0-3]\n"), std::string::npos) << text;
  EXPECT_NE(text.find("      load_batch [rank 2]\n"), std::string::npos) << text;
  EXPECT_NE(text.find("      all_reduce [ranks 0-1,3]\n"), std::string::npos) << text;
  EXPECT_NE(text.find("rank 2 (local rank 0, node 1 node2, pid 1002):"), std::string::npos) << text;
  EXPECT_NE(text.find("File \"train.py\", line 1, in load_batch"), std::string::npos) << text;
  EXPECT_NE(text.find("0x10 Py_BytesMain  (/usr/bin/python3.11)"), std::string::npos) << text;
  auto json = report_json(report, "hang");
  EXPECT_EQ(json["summary"], "rank 2 on node2 differs");
  EXPECT_EQ(json["groups"][0]["ranks_text"], "2");
  EXPECT_EQ(json["workers"].size(), 4u);
}

TEST(WorkerStacksJson, RoundTripsAndRefusesWhatIsOutOfBounds) {
  auto workers = one_rank_stuck_elsewhere();
  workers[1].problems.push_back("gdb: exited with code 1");
  auto decoded = decode_worker_stacks(encode_worker_stacks(workers));
  ASSERT_EQ(decoded.size(), 4u);
  EXPECT_EQ(decoded[1].problems, workers[1].problems);
  EXPECT_EQ(decoded[3].rank, 2);  // the order is kept
  EXPECT_EQ(decoded[3].python_threads[0].frames[2].function, "load_batch");
  EXPECT_EQ(decoded[3].native_threads[0].frames[0].address, "0x10");
  EXPECT_THROW(decode_worker_stacks("{"), util::ProtocolError);
  EXPECT_THROW(decode_worker_stacks("[{\"rank\": \"x\"}]"), util::ProtocolError);
  EXPECT_THROW(decode_worker_stacks("[{\"host\": \"" + std::string(kMaxFieldLength + 1, 'h') + "\"}]"),
               util::ProtocolError);
  std::string many = "[{\"python_threads\": [{\"frames\": [";
  for (std::size_t i = 0; i <= kMaxFramesPerThread; ++i) many += (i ? ",{}" : "{}");
  EXPECT_THROW(decode_worker_stacks(many + "]}]}]"), util::ProtocolError);
}

TEST(WorkerStacksJson, AListTooBigForAFrameIsCutInOrderAndSaysSo) {
  std::vector<WorkerStacks> workers;
  for (int rank = 0; rank < 8; ++rank) {
    WorkerStacks worker = python_worker(rank, "h", {"<module>", "train"});
    for (int t = 0; t < 50; ++t) {
      ThreadStack extra;
      extra.thread = std::to_string(t);
      for (int f = 0; f < 60; ++f) extra.frames.push_back({fmt::format("frame_{}", f), "/lib/x.so", 0, "0x1"});
      worker.native_threads.push_back(extra);
    }
    workers.push_back(worker);
  }
  std::string whole = encode_worker_stacks(workers);
  std::string cut = encode_worker_stacks_within(workers, 64 * 1024);
  ASSERT_GT(whole.size(), 64u * 1024);
  ASSERT_LE(cut.size(), 64u * 1024);
  auto decoded = decode_worker_stacks(cut);
  ASSERT_EQ(decoded.size(), 8u);
  EXPECT_EQ(decoded[0].native_threads.size(), 1u);  // the main thread kept
  EXPECT_TRUE(decoded[0].native_threads[0].main_thread);
  EXPECT_EQ(decoded[0].python_threads[0].frames[1].function, "train");
  EXPECT_EQ(decoded[0].problems.back(), "native threads other than the main one were left out to fit the node's report in one message");
  EXPECT_EQ(encode_worker_stacks_within(workers, whole.size()), whole);  // what fits is not touched
}

}  // namespace
}  // namespace dlaunch::forensics
