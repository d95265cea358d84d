// Signals by name: in messages, and as users type them.
#include "util/signal_names.h"

#include <csignal>
#include <gtest/gtest.h>
#include <string>

namespace dlaunch::util {
namespace {

TEST(SignalNames, SignalsHaveTheirUsualNames) {
  EXPECT_STREQ(signal_name(SIGTERM), "SIGTERM");
  EXPECT_STREQ(signal_name(SIGKILL), "SIGKILL");
  EXPECT_STREQ(signal_name(SIGSEGV), "SIGSEGV");
  EXPECT_STREQ(signal_name(SIGUSR1), "SIGUSR1");
  EXPECT_EQ(std::string(signal_name(99)).rfind("SIG", 0), std::string::npos);
}

TEST(SignalNames, SignalsAreReadByNameWithOrWithoutSigOrByNumber) {
  EXPECT_EQ(signal_number("USR1"), SIGUSR1);
  EXPECT_EQ(signal_number("SIGUSR2"), SIGUSR2);
  EXPECT_EQ(signal_number("usr1"), SIGUSR1);
  EXPECT_EQ(signal_number("sigterm"), SIGTERM);
  EXPECT_EQ(signal_number("10"), 10);
  EXPECT_EQ(signal_number("15"), SIGTERM);
  for (const char* nonsense : {"", "USR3", "SIG", "0", "99", "-1", "1x", "TERM "})
    EXPECT_EQ(signal_number(nonsense), std::nullopt) << nonsense;
  for (int signal = 1; signal < 32; ++signal) {
    std::string name = signal_name(signal);
    if (name.rfind("SIG", 0) == 0) {
      EXPECT_EQ(signal_number(name), signal) << name;
    }
  }
}

}  // namespace
}  // namespace dlaunch::util
