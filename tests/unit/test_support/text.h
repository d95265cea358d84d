// Test helpers for messages and output.
#pragma once

#include <gtest/gtest.h>

#include <string>

namespace dlaunch::test_support {

// Plain gtest (the unit test binary does not link gmock's library).
inline ::testing::AssertionResult contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << text << "' does not contain '" << part << "'";
}

}  // namespace dlaunch::test_support
