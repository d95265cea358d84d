// What a program needs from the system it runs on, read from its ELF file.
#include "util/elf_needs.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <unistd.h>

namespace dlaunch::util {
namespace {

bool has(const std::vector<std::string>& items, const std::string& item) {
  return std::find(items.begin(), items.end(), item) != items.end();
}

TEST(ElfNeeds, ReadsDlaunchsLoaderLibrariesAndGlibc) {
  std::string problem;
  auto needs = elf_needs(DLAUNCH_BINARY, problem);
  ASSERT_TRUE(needs.has_value()) << problem;
  EXPECT_FALSE(needs->is_static());
  EXPECT_TRUE(needs->interpreter.starts_with("/")) << needs->interpreter;
  EXPECT_NE(needs->interpreter.find("ld-linux"), std::string::npos) << needs->interpreter;
  EXPECT_TRUE(has(needs->libraries, "libc.so.6"));
  EXPECT_TRUE(has(needs->libraries, "libstdc++.so.6"));
  EXPECT_TRUE(needs->newest_glibc.starts_with("2.")) << needs->newest_glibc;
}

TEST(ElfNeeds, SaysWhyForAFileThatIsNoProgram) {
  auto folder = std::filesystem::temp_directory_path() / ("elf_needs_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(folder);
  std::ofstream(folder / "script.sh") << "#!/bin/sh\necho hi\n";
  std::string problem;
  EXPECT_FALSE(elf_needs((folder / "script.sh").string(), problem).has_value());
  EXPECT_NE(problem.find("is not an ELF program"), std::string::npos) << problem;
  EXPECT_FALSE(elf_needs((folder / "missing").string(), problem).has_value());
  EXPECT_NE(problem.find("cannot read"), std::string::npos) << problem;
  std::filesystem::remove_all(folder);
}

TEST(ElfNeeds, GlibcVersionsCompareNumberByNumber) {
  EXPECT_EQ(newer_glibc("2.4", "2.34"), "2.34");  // not as text, where "2.4" > "2.34"
  EXPECT_EQ(newer_glibc("2.34", "2.17"), "2.34");
  EXPECT_EQ(newer_glibc("2.3.4", "2.3"), "2.3.4");
  EXPECT_EQ(newer_glibc("", "2.2.5"), "2.2.5");
}

}  // namespace
}  // namespace dlaunch::util
