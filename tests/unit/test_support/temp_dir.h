// A private temporary folder for one test, removed with everything in it.
#pragma once

#include <gtest/gtest.h>

#include "util/temporary_folder.h"

namespace dlaunch::test_support {

// util::TemporaryFolder under GoogleTest's own temporary folder
// (TEST_TMPDIR when a runner sets it). Throws SystemError when it cannot
// be made, which fails the test that wanted it.
class TempDir : public util::TemporaryFolder {
 public:
  TempDir() : util::TemporaryFolder(trimmed(::testing::TempDir()), "dlaunch_test") {}

 private:
  // ::testing::TempDir() ends with a slash; the folder's name should not hold two.
  static std::string trimmed(std::string base) {
    while (base.size() > 1 && base.ends_with('/')) base.pop_back();
    return base;
  }
};

}  // namespace dlaunch::test_support
