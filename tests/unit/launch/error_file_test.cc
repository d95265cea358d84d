// Reading the message a worker's @record left at TORCHELASTIC_ERROR_FILE.
#include "launch/error_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace dlaunch::launch {
namespace {

class ErrorFile : public ::testing::Test {
 protected:
  std::string with(const std::string& text) {
    std::ofstream(path_) << text;
    return read_error_file_message(path_);
  }
  void TearDown() override { std::filesystem::remove(path_); }
  std::string path_ = ::testing::TempDir() + "dlaunch_error_file_" + std::to_string(::getpid()) + ".json";
};

TEST_F(ErrorFile, TheNestedMessageOfTorchElasticsRecord) {
  EXPECT_EQ(with(R"({"message": {"message": "RuntimeError: CUDA error", "extraInfo": {"py_callstack": "..."}}})"),
            "RuntimeError: CUDA error");
}

TEST_F(ErrorFile, APlainStringMessage) {
  EXPECT_EQ(with(R"({"message": "ValueError: bad batch"})"), "ValueError: bad batch");
}

TEST_F(ErrorFile, AnythingElseGivesNoMessageAndNeverThrows) {
  for (const char* text : {"", "not json", "[1, 2]", "\"message\"", R"({"other": "x"})",
                           R"({"message": 3})", R"({"message": {"extraInfo": {}}})",
                           R"({"message": {"message": 7}})", R"({"message": "trunc)"}) {
    EXPECT_EQ(with(text), "") << text;
  }
}

TEST_F(ErrorFile, AMissingFileGivesNoMessage) {
  EXPECT_EQ(read_error_file_message(path_ + ".missing"), "");
}

}  // namespace
}  // namespace dlaunch::launch
