// The task folders of a job array and the files that describe it.
#include "submit/array_folders.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>

#include "util/error.h"

namespace dlaunch::submit {
namespace {

JobArray sweep_array() {
  JobArray array;
  array.spec = "0-3%2";
  array.max_parallel = 2;
  array.swept = true;
  array.tasks = sweep_tasks(parse_sweep({"lr=0.1,0.01", "bs=32,64"}, "--sweep"));
  return array;
}

std::string read(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

TEST(ArrayFolders, SweepJsonListsEveryTaskInOrderWithItsValues) {
  nlohmann::ordered_json document = sweep_json(sweep_array(), std::string("12"));
  EXPECT_EQ(document.dump(),
            R"({"array_job_id":"12","max_parallel":2,"tasks":[)"
            R"({"index":0,"values":{"lr":"0.1","bs":"32"},"args":["--lr=0.1","--bs=32"],"folder":"task_0"},)"
            R"({"index":1,"values":{"lr":"0.1","bs":"64"},"args":["--lr=0.1","--bs=64"],"folder":"task_1"},)"
            R"({"index":2,"values":{"lr":"0.01","bs":"32"},"args":["--lr=0.01","--bs=32"],"folder":"task_2"},)"
            R"({"index":3,"values":{"lr":"0.01","bs":"64"},"args":["--lr=0.01","--bs=64"],"folder":"task_3"}]})");
}

TEST(ArrayFolders, BeforeSbatchAnswersTheIdIsNullAndARawArrayHasNoValues) {
  JobArray raw;
  raw.spec = "3,5";
  raw.tasks = {SweepTask{3, {}, {}}, SweepTask{5, {}, {}}};
  EXPECT_EQ(sweep_json(raw, std::nullopt).dump(),
            R"({"array_job_id":null,"max_parallel":null,"tasks":[)"
            R"({"index":3,"values":{},"args":[],"folder":"task_3"},)"
            R"({"index":5,"values":{},"args":[],"folder":"task_5"}]})");
}

TEST(ArrayFolders, EveryTaskGetsItsFolderAndConfigBeforeSbatch) {
  const std::string folder = ::testing::TempDir() + "dlaunch array folders test";
  std::filesystem::remove_all(folder);
  std::filesystem::create_directories(folder);
  JobArray array = sweep_array();
  create_task_folders(folder, array);
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(std::filesystem::is_directory(folder + "/task_" + std::to_string(i)));
  EXPECT_EQ(nlohmann::ordered_json::parse(read(folder + "/task_2/config.json")).dump(),
            R"({"index":2,"values":{"lr":"0.01","bs":"32"},"args":["--lr=0.01","--bs=32"]})");
  EXPECT_TRUE(nlohmann::json::parse(read(folder + "/sweep.json"))["array_job_id"].is_null());
  record_array_job_id(folder, array, "77");
  EXPECT_EQ(nlohmann::json::parse(read(folder + "/sweep.json"))["array_job_id"], "77");
  EXPECT_FALSE(std::filesystem::exists(folder + "/sweep.json.partial"));
  EXPECT_EQ(task_log_path(folder, "77", 2), folder + "/task_2/slurm-77_2.log");
  // A second time the folders exist: nothing is overwritten silently.
  EXPECT_THROW(create_task_folders(folder, array), util::SystemError);
  std::filesystem::remove_all(folder);
}

}  // namespace
}  // namespace dlaunch::submit
