// Reading the message a worker's @record left at TORCHELASTIC_ERROR_FILE.
#include "launch/error_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

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

// Issue 24: a worker replaced its error file with a FIFO and exited 1; the
// launcher blocked in open(), deaf to SIGTERM. Now no message, at once: the
// summary shows the log's last lines instead.
TEST_F(ErrorFile, AFifoGivesNoMessageAndNoHang) {
  ASSERT_EQ(::mkfifo(path_.c_str(), 0600), 0);
  EXPECT_EQ(read_error_file_message(path_), "");
}

TEST_F(ErrorFile, ALinkToADeviceGivesNoMessage) {
  ASSERT_EQ(::symlink("/dev/zero", path_.c_str()), 0);
  EXPECT_EQ(read_error_file_message(path_), "");
}

// Issue 24: 32 MB of '[' took the launcher to 2.4 GB for 8.6 s.
TEST_F(ErrorFile, AHugeFileIsNotRead) {
  std::string big = R"({"message": ")" + std::string(kMaxErrorFileBytes, 'x') + R"("})";
  EXPECT_EQ(with(big), "");
}

TEST_F(ErrorFile, DeepNestingGivesNoMessage) {
  EXPECT_EQ(with(std::string(kMaxErrorFileBytes, '[')), "");
  std::string deep = R"({"message": {"message": "x", "extraInfo": )" + std::string(100, '[') +
                     std::string(100, ']') + "}}";
  EXPECT_EQ(with(deep), "");
}

TEST_F(ErrorFile, ALongMessageIsCutBeforeACharacterNeverInside) {
  // 'é' is 2 bytes: one of them would straddle the cut at an odd length.
  std::string message = "x";
  for (std::size_t i = 0; i < kMaxErrorMessageBytes; ++i) message += "\u00e9";
  std::string got = with(R"({"message": ")" + message + R"("})");
  ASSERT_TRUE(got.ends_with(" [cut]")) << got.size();
  EXPECT_LE(got.size(), kMaxErrorMessageBytes + 6);
  EXPECT_FALSE(nlohmann::json(got).dump().empty());  // valid UTF-8: dump() would throw
}

}  // namespace
}  // namespace dlaunch::launch
