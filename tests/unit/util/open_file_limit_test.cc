// The open-file limit: raised to the hard limit at most the cap, never
// lowered, and put back in a child as it was before the first raise. Each
// case runs in a fresh process (a death test): a raise is for the process's
// life, and the first one decides what counts as the original limit.
#include "util/open_file_limit.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cstdlib>

namespace dlaunch::util {
namespace {

rlim_t soft_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) std::_Exit(30);
  return limit.rlim_cur;
}

rlim_t hard_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) std::_Exit(30);
  return limit.rlim_max;
}

void set_soft_limit(rlim_t soft) {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) std::_Exit(30);
  limit.rlim_cur = soft;
  if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) std::_Exit(31);
}

class OpenFileLimitDeathTest : public ::testing::Test {
 protected:
  void SetUp() override {
    rlim_t hard = hard_limit();
    // The cases lower the soft limit to 256 and raise it up to 1024.
    if (hard != RLIM_INFINITY && hard < 1024)
      GTEST_SKIP() << "the hard open-file limit (" << hard << ") leaves no room to raise";
    GTEST_FLAG_SET(death_test_style, "threadsafe");
  }
};

TEST_F(OpenFileLimitDeathTest, RaisesTheSoftLimitUpToTheCap) {
  EXPECT_EXIT(
      {
        set_soft_limit(256);
        if (raise_open_file_limit(512) != 512) std::_Exit(10);
        std::_Exit(soft_limit() == 512 ? 0 : 11);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST_F(OpenFileLimitDeathTest, NeverAboveTheHardLimit) {
  rlim_t hard = hard_limit();
  if (hard == RLIM_INFINITY) GTEST_SKIP() << "no hard open-file limit";
  EXPECT_EXIT(
      {
        set_soft_limit(256);
        if (raise_open_file_limit(static_cast<std::size_t>(hard) + 1000) != hard) std::_Exit(10);
        std::_Exit(soft_limit() == hard ? 0 : 11);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST_F(OpenFileLimitDeathTest, NeverLowersTheSoftLimit) {
  EXPECT_EXIT(
      {
        set_soft_limit(512);
        if (raise_open_file_limit(300) != 512) std::_Exit(10);
        if (soft_limit() != 512) std::_Exit(11);
        // Nothing was raised, so there is nothing to put back.
        set_soft_limit(400);
        restore_open_file_limit_in_child();
        std::_Exit(soft_limit() == 400 ? 0 : 12);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST_F(OpenFileLimitDeathTest, RestoreBringsBackTheLimitFromBeforeTheFirstRaise) {
  EXPECT_EXIT(
      {
        set_soft_limit(256);
        if (raise_open_file_limit(512) != 512) std::_Exit(10);
        if (raise_open_file_limit(1024) != 1024) std::_Exit(11);
        restore_open_file_limit_in_child();
        std::_Exit(soft_limit() == 256 ? 0 : 12);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST_F(OpenFileLimitDeathTest, WithoutARaiseRestoreChangesNothing) {
  EXPECT_EXIT(
      {
        set_soft_limit(300);
        restore_open_file_limit_in_child();
        std::_Exit(soft_limit() == 300 ? 0 : 10);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace dlaunch::util
