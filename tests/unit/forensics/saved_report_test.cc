#include "forensics/saved_report.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#include "../test_support/temp_dir.h"
#include "../test_support/text.h"
#include "util/bounded_json.h"

namespace dlaunch::forensics {
namespace {

using test_support::contains;

WorkerStacks worker_in(int rank, const std::string& function) {
  WorkerStacks worker;
  worker.rank = rank;
  worker.local_rank = rank;
  worker.node_rank = 0;
  worker.host = "node1";
  worker.pid = 4000 + rank;
  ThreadStack thread;
  thread.thread = "0x1";
  thread.main_thread = true;
  thread.frames.push_back({"<module>", "train.py", 1, ""});
  thread.frames.push_back({function, "train.py", 7, ""});
  worker.python_threads.push_back(thread);
  return worker;
}

// Ranks 0, 1 and 3 wait in all_reduce; rank 2 is elsewhere.
std::vector<WorkerStacks> rank_2_elsewhere() {
  return {worker_in(0, "all_reduce"), worker_in(1, "all_reduce"), worker_in(2, "load_batch"),
          worker_in(3, "all_reduce")};
}

std::string file_text(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

bool any_line_holds(const std::vector<std::string>& lines, const std::string& part) {
  for (const auto& line : lines)
    if (contains(line, part)) return true;
  return false;
}

TEST(SavedReport, WithoutAFolderItIsOnlyMergedAndSummed) {
  SavedReport saved = save_report(rank_2_elsewhere(), "hang", "", "hang");
  EXPECT_EQ(saved.summary, "rank 2 on node1 differs");
  EXPECT_EQ(saved.report.groups.size(), 2u);
  EXPECT_TRUE(saved.text_path.empty());
  EXPECT_TRUE(saved.json_path.empty());
  EXPECT_FALSE(saved.lines.empty());
}

TEST(SavedReport, TheTextAndTheJsonAreSavedInTheStacksFolderAndNamedLast) {
  test_support::TempDir folder;
  SavedReport saved = save_report(rank_2_elsewhere(), "the job hung", folder.path(), "hang-1");
  EXPECT_EQ(saved.text_path, folder.path() + "/stacks/hang-1.txt");
  EXPECT_EQ(saved.json_path, folder.path() + "/stacks/hang-1.json");
  EXPECT_EQ(saved.lines.back(), "full report: " + saved.text_path + " (and .json)");
  const std::string text = file_text(saved.text_path);
  EXPECT_TRUE(contains(text, "the job hung")) << text;
  EXPECT_TRUE(contains(text, "load_batch")) << text;
  auto json = util::parse_json_bounded(file_text(saved.json_path));
  ASSERT_TRUE(json.is_object()) << file_text(saved.json_path);
  EXPECT_TRUE(contains(json.dump(), "load_batch"));
}

TEST(SavedReport, AFolderThatCannotHoldTheReportIsSaidNotThrown) {
  test_support::TempDir folder;
  // "stacks" is taken by a file, so the report has no folder to go to.
  std::ofstream(folder.path() + "/stacks") << "in the way\n";
  SavedReport saved = save_report(rank_2_elsewhere(), "hang", folder.path(), "hang");
  EXPECT_TRUE(saved.text_path.empty());
  EXPECT_TRUE(any_line_holds(saved.lines, "the full report could not be saved")) << testing::PrintToString(saved.lines);
  EXPECT_EQ(saved.summary, "rank 2 on node1 differs");
}

TEST(SavedReport, ALinkPlantedAsTheStacksFolderIsNotWrittenThrough) {
  test_support::TempDir folder;
  test_support::TempDir elsewhere;
  ASSERT_EQ(::symlink(elsewhere.path().c_str(), (folder.path() + "/stacks").c_str()), 0);
  SavedReport saved = save_report(rank_2_elsewhere(), "hang", folder.path(), "hang");
  EXPECT_TRUE(saved.text_path.empty());
  EXPECT_FALSE(std::filesystem::exists(elsewhere.path() + "/hang.txt"));
  EXPECT_TRUE(any_line_holds(saved.lines, "the full report could not be saved"));
}

}  // namespace
}  // namespace dlaunch::forensics
