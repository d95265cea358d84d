// dlaunch check's correctness check as one rank sees it: its verdict line,
// rank 0's summary, and the exit code.
#include "check/correctness_check.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "fake_communicator.h"

namespace dlaunch::check {
namespace {

using test_support::FakeCommunicator;

// Sets the locale variables terminal_is_utf8() reads while it lives: LANG
// to LANG (unset when null), LC_ALL and LC_CTYPE unset.
class Locale {
 public:
  explicit Locale(const char* lang) {
    for (std::size_t i = 0; i < 3; ++i) {
      const char* value = std::getenv(kNames[i]);
      if (value != nullptr) saved_[i] = value;
      ::unsetenv(kNames[i]);
    }
    if (lang != nullptr) ::setenv("LANG", lang, 1);
  }
  ~Locale() {
    for (std::size_t i = 0; i < 3; ++i) {
      if (saved_[i]) ::setenv(kNames[i], saved_[i]->c_str(), 1);
      else ::unsetenv(kNames[i]);
    }
  }

 private:
  static constexpr const char* kNames[3] = {"LC_ALL", "LC_CTYPE", "LANG"};
  std::optional<std::string> saved_[3];
};

collective::WorkerIdentity identity(int rank, int world_size) {
  collective::WorkerIdentity worker;
  worker.rank = rank;
  worker.world_size = world_size;
  worker.local_rank = rank;
  worker.host = "node1";
  return worker;
}

std::string run_capturing(FakeCommunicator& communicator, const CheckOptions& options, int* code) {
  ::testing::internal::CaptureStdout();
  *code = run_correctness_check(communicator, identity(communicator.rank(), communicator.size()), options);
  return ::testing::internal::GetCapturedStdout();
}

TEST(CorrectnessCheck, TheLocaleDecidesBetweenMarksAndWords) {
  {
    Locale locale("en_US.UTF-8");
    EXPECT_TRUE(terminal_is_utf8());
  }
  {
    Locale locale("C.utf8");
    EXPECT_TRUE(terminal_is_utf8());
  }
  {
    Locale locale("C");
    EXPECT_FALSE(terminal_is_utf8());
  }
  {
    Locale locale(nullptr);
    EXPECT_FALSE(terminal_is_utf8());
  }
  {
    Locale locale("en_US.UTF-8");
    ::setenv("LC_ALL", "POSIX", 1);  // LC_ALL wins over LANG
    EXPECT_FALSE(terminal_is_utf8());
  }
}

TEST(CorrectnessCheck, ALoneRankPassesAndSummarises) {
  Locale locale("C");
  FakeCommunicator communicator(0, 1);
  int code = -1;
  std::string output = run_capturing(communicator, CheckOptions{}, &code);
  EXPECT_EQ(code, 0);
  EXPECT_NE(output.find("rank   0 local  0 on node1: OK all-reduce sum 0 == 0, broadcast ok, barrier ok\n"),
            std::string::npos)
      << output;
  EXPECT_NE(output.find("# dlaunch check: PASSED\n"), std::string::npos) << output;
  EXPECT_NE(output.find("#   world size 1, 1 node(s), ranks per node: node1=1\n"), std::string::npos) << output;
  EXPECT_NE(output.find("#   passed 1/1, failed 0, time "), std::string::npos) << output;
  EXPECT_EQ(communicator.barriers, 1);
}

TEST(CorrectnessCheck, AWrongSumFailsTheRankAndTheJob) {
  Locale locale("en_US.UTF-8");
  FakeCommunicator communicator(0, 1);
  CheckOptions options;
  options.inject_wrong_rank = 0;
  int code = -1;
  std::string output = run_capturing(communicator, options, &code);
  EXPECT_EQ(code, 1);
  EXPECT_NE(output.find("rank   0 local  0 on node1: \xe2\x9c\x97 all-reduce sum 1000 (expected 0)"),
            std::string::npos)
      << output;
  EXPECT_NE(output.find("# dlaunch check: \xe2\x9c\x97 FAILED\n"), std::string::npos) << output;
  EXPECT_NE(output.find("#   passed 0/1, failed 1"), std::string::npos) << output;
}

// Rank 1 of 2: the others' values come through the group; only rank 0
// prints the summary, but every rank's exit code says whether any failed.
TEST(CorrectnessCheck, AnotherRanksFailureFailsThisRankWithoutASummary) {
  Locale locale("C");
  FakeCommunicator communicator(1, 2);
  communicator.others_add = {{0}, {1}};  // rank 0's value, then its failure
  communicator.root_sends = {0x5eed + 2};
  int code = -1;
  std::string output = run_capturing(communicator, CheckOptions{}, &code);
  EXPECT_EQ(code, 1);
  EXPECT_NE(output.find("rank   1 local  1 on node1: OK all-reduce sum 1 == 1, broadcast ok"),
            std::string::npos)
      << output;
  EXPECT_EQ(output.find("# dlaunch check"), std::string::npos) << output;
}

TEST(CorrectnessCheck, AWrongBroadcastIsReported) {
  Locale locale("C");
  FakeCommunicator communicator(1, 2);
  communicator.others_add = {{0}};
  communicator.root_sends = {7};
  int code = -1;
  std::string output = run_capturing(communicator, CheckOptions{}, &code);
  EXPECT_EQ(code, 1);
  EXPECT_NE(output.find("FAIL all-reduce sum 1 (expected 1), broadcast 7 (expected 24303)"),
            std::string::npos)
      << output;
}

}  // namespace
}  // namespace dlaunch::check
