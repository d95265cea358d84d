// A private folder that lives as long as its object.
#include "util/temporary_folder.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <utility>

#include "../test_support/temp_dir.h"
#include "util/error.h"

namespace dlaunch::util {
namespace {

namespace fs = std::filesystem;

TEST(TemporaryFolder, ItIsANewPrivateFolderUnderTheBaseWithThePrefix) {
  test_support::TempDir base;
  TemporaryFolder folder(base.path(), "dlaunch-x");
  EXPECT_EQ(fs::path(folder.path()).parent_path(), fs::path(base.path()));
  EXPECT_EQ(fs::path(folder.path()).filename().string().rfind("dlaunch-x-", 0), 0u) << folder.path();
  struct stat info {};
  ASSERT_EQ(::stat(folder.path().c_str(), &info), 0);
  EXPECT_TRUE(S_ISDIR(info.st_mode));
  EXPECT_EQ(info.st_mode & 0777, 0700u);
  TemporaryFolder other(base.path(), "dlaunch-x");
  EXPECT_NE(other.path(), folder.path());
}

TEST(TemporaryFolder, ItGoesWithEverythingInItUnlessKept) {
  test_support::TempDir base;
  std::string removed;
  std::string kept;
  {
    TemporaryFolder folder(base.path(), "gone");
    removed = folder.path();
    fs::create_directories(removed + "/a/b");
    std::ofstream(removed + "/a/b/file") << "x";
    TemporaryFolder keeper(base.path(), "kept");
    kept = keeper.path();
    keeper.keep();
  }
  EXPECT_FALSE(fs::exists(removed));
  EXPECT_TRUE(fs::is_directory(kept));
}

TEST(TemporaryFolder, AMovedFolderIsRemovedOnceByItsNewOwner) {
  test_support::TempDir base;
  std::string path;
  {
    std::optional<TemporaryFolder> owner;
    {
      TemporaryFolder first(base.path(), "moved");
      path = first.path();
      owner.emplace(std::move(first));
    }
    EXPECT_TRUE(fs::is_directory(path));  // the moved-from one left it alone
    EXPECT_EQ(owner->path(), path);
  }
  EXPECT_FALSE(fs::exists(path));
}

TEST(TemporaryFolder, AMissingBaseThrowsNamingThePattern) {
  try {
    TemporaryFolder folder("/nonexistent/dlaunch-base", "x");
    FAIL() << "no error";
  } catch (const SystemError& error) {
    EXPECT_NE(std::string(error.what()).find("/nonexistent/dlaunch-base/x-XXXXXX"), std::string::npos) << error.what();
  }
}

TEST(TemporaryFolder, TheBaseIsTmpdirUnlessItIsUnsetOrEmpty) {
  using Variables = std::map<std::string, std::string>;
  EXPECT_EQ(temporary_base(Environment(Variables{{"TMPDIR", "/scratch/me"}})), "/scratch/me");
  EXPECT_EQ(temporary_base(Environment(Variables{{"TMPDIR", ""}})), "/tmp");
  EXPECT_EQ(temporary_base(Environment()), "/tmp");
}

}  // namespace
}  // namespace dlaunch::util
