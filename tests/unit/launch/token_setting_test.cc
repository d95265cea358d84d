// Where dlaunch run's rendezvous secret comes from: --rdzv-token-file
// refuses what is not a private file holding one line, and says why.
#include "launch/token_setting.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "util/error.h"
#include "../test_support/input_error.h"

namespace dlaunch::launch {
namespace {

class RdzvTokenFile : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::remove_all(folder_);
    std::filesystem::create_directories(folder_);
    ::chmod(folder_.c_str(), 0700);
  }
  void TearDown() override { std::filesystem::remove_all(folder_); }

  std::string file(const std::string& name, const std::string& contents, mode_t mode) {
    std::string path = folder_ + "/" + name;
    std::ofstream(path) << contents;
    ::chmod(path.c_str(), mode);
    return path;
  }

  static std::optional<util::Sourced<std::string>> token_from(const std::string& path) {
    util::Environment environment;
    auto options = parse_run_options({"--rdzv-token-file", path, "train.py"}, environment);
    EXPECT_TRUE(options.has_value());
    return resolve_rdzv_token(*options, environment, Topology{});
  }

  // The InputError's message for PATH, or "no error".
  static std::string error_of(const std::string& path) {
    return test_support::input_error_of([&] { token_from(path); });
  }

  std::string folder_ = ::testing::TempDir() + "dlaunch_token_file_test";
};

TEST_F(RdzvTokenFile, TheSecretIsReadWithoutItsNewline) {
  std::string secret(64, 'a');
  auto token = token_from(file("token", secret + "\n", 0600));
  ASSERT_TRUE(token);
  EXPECT_EQ(token->value, secret);
}

TEST_F(RdzvTokenFile, ADirectoryIsRefusedAsADirectory) {
  std::string message = error_of(folder_);  // mode 700, as a private folder is
  EXPECT_NE(message.find("--rdzv-token-file '" + folder_ +
                         "' is a directory, not a file holding the secret"),
            std::string::npos)
      << message;
  EXPECT_EQ(message.find("characters"), std::string::npos) << message;
}

TEST_F(RdzvTokenFile, AFifoIsRefusedWithoutWaitingForAWriter) {
  std::string path = folder_ + "/fifo";
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  std::string message = error_of(path);
  EXPECT_NE(message.find("'" + path + "' is a FIFO, not a regular file"), std::string::npos)
      << message;
}

TEST_F(RdzvTokenFile, AFileThatCannotBeOpenedSaysWhy) {
  std::string message = error_of(folder_ + "/missing");
  EXPECT_NE(message.find("cannot be opened: " + std::string(std::strerror(ENOENT))),
            std::string::npos)
      << message;
  message = error_of(file("plain", std::string(64, 'a'), 0600) + "/below");
  EXPECT_NE(message.find("cannot be opened: " + std::string(std::strerror(ENOTDIR))),
            std::string::npos)
      << message;
}

TEST_F(RdzvTokenFile, OthersMayNotReadItAndItHoldsOneLine) {
  EXPECT_NE(error_of(file("open", std::string(64, 'a'), 0644)).find("chmod 600"),
            std::string::npos);
  std::string message = error_of(file("big", std::string(5000, 'a'), 0600));
  EXPECT_NE(message.find("holds 5000 bytes; a secret is one line"), std::string::npos) << message;
  EXPECT_NE(error_of(file("short", "abc\n", 0600)).find("has 3 characters"), std::string::npos);
}

}  // namespace
}  // namespace dlaunch::launch
