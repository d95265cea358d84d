// The folder of a run's per-worker files: --log-dir, or a temporary one that
// is removed unless a worker's output was filed there.
#include "launch/log_root.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "util/error.h"

namespace dlaunch::launch {
namespace {

namespace fs = std::filesystem;

// Sets TMPDIR to a fresh folder of this test while it lives.
class TemporaryTmpdir {
 public:
  TemporaryTmpdir() : dir_(fs::path(::testing::TempDir()) / ("dlaunch_log_root_" + std::to_string(::getpid()))) {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    const char* old = std::getenv("TMPDIR");
    if (old != nullptr) previous_ = old;
    ::setenv("TMPDIR", dir_.c_str(), 1);
  }
  ~TemporaryTmpdir() {
    if (previous_) ::setenv("TMPDIR", previous_->c_str(), 1);
    else ::unsetenv("TMPDIR");
    fs::remove_all(dir_);
  }
  const fs::path& dir() const { return dir_; }

 private:
  fs::path dir_;
  std::optional<std::string> previous_;
};

TEST(LogRoot, WithoutLogDirATemporaryFolderIsMadeAndRemoved) {
  TemporaryTmpdir tmp;
  std::string path;
  {
    LogRoot root{LaunchConfig{}};
    path = root.path();
    EXPECT_TRUE(root.temporary());
    EXPECT_FALSE(root.kept());
    EXPECT_EQ(fs::path(path).parent_path(), tmp.dir());
    EXPECT_EQ(fs::path(path).filename().string().rfind("dlaunch-", 0), 0u) << path;
    EXPECT_TRUE(fs::is_directory(path));
    std::ofstream(fs::path(path) / "error_0.json") << "{}";  // an error file, removed with it
  }
  EXPECT_FALSE(fs::exists(path));
}

TEST(LogRoot, ATemporaryFolderThatHoldsFiledOutputIsKept) {
  TemporaryTmpdir tmp;
  for (bool tee : {false, true}) {
    LaunchConfig config;
    StreamRouting& routing = tee ? config.tee : config.redirects;
    routing.per_rank[1] = kStderr;  // -r/-t for one rank is enough
    std::string path;
    {
      LogRoot root(config);
      path = root.path();
      EXPECT_TRUE(root.temporary());
      EXPECT_TRUE(root.kept());
    }
    EXPECT_TRUE(fs::is_directory(path)) << (tee ? "tee" : "redirects");
    fs::remove_all(path);
  }
}

TEST(LogRoot, ARoutingThatFilesNothingDoesNotKeepIt) {
  TemporaryTmpdir tmp;
  LaunchConfig config;
  config.redirects.per_rank[0] = kNoStream;
  LogRoot root(config);
  EXPECT_FALSE(root.kept());
}

TEST(LogRoot, LogDirIsCreatedMadeAbsoluteAndKept) {
  TemporaryTmpdir tmp;
  fs::path previous = fs::current_path();
  fs::current_path(tmp.dir());
  LaunchConfig config;
  config.log_dir = "runs/a/b";
  std::string path;
  {
    LogRoot root(config);
    path = root.path();
    EXPECT_FALSE(root.temporary());
    EXPECT_TRUE(root.kept());
  }
  fs::current_path(previous);
  EXPECT_EQ(fs::path(path), tmp.dir() / "runs/a/b");
  EXPECT_TRUE(fs::is_directory(path));
}

TEST(LogRoot, ALogDirThatCannotBeCreatedIsNamed) {
  TemporaryTmpdir tmp;
  std::ofstream(tmp.dir() / "file") << "x";
  LaunchConfig config;
  config.log_dir = (tmp.dir() / "file" / "logs").string();
  try {
    LogRoot root(config);
    FAIL() << "a folder below a file was created";
  } catch (const util::SystemError& error) {
    EXPECT_NE(std::string(error.what()).find("cannot create --log-dir '" + *config.log_dir + "'"),
              std::string::npos)
        << error.what();
  }
}

// Another user could plant links in a folder everyone may write (issue 24):
// refused before anything is written there, naming the folder and the fix.
TEST(LogRoot, ALogDirEveryoneMayWriteWithoutTheStickyBitIsRefused) {
  TemporaryTmpdir tmp;
  const fs::path folder = tmp.dir() / "shared";
  fs::create_directory(folder);
  ASSERT_EQ(::chmod(folder.c_str(), 0777), 0);
  LaunchConfig config;
  config.log_dir = folder.string();
  try {
    LogRoot root(config);
    FAIL() << "a folder everyone may write was taken";
  } catch (const util::InputError& error) {
    EXPECT_NE(std::string(error.what()).find("--log-dir '" + folder.string() + "' may be written by every user"),
              std::string::npos)
        << error.what();
    EXPECT_NE(std::string(error.what()).find("chmod o-w"), std::string::npos) << error.what();
  }
  EXPECT_TRUE(fs::is_empty(folder));
}

TEST(LogRoot, ALogDirOfAnotherUserIsRefusedEvenForRoot) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a folder to another user";
  TemporaryTmpdir tmp;
  const fs::path folder = tmp.dir() / "theirs";
  fs::create_directory(folder);
  ASSERT_EQ(::chown(folder.c_str(), 65534, 65534), 0);
  LaunchConfig config;
  config.log_dir = folder.string();
  EXPECT_THROW(LogRoot root(config), util::InputError);
  EXPECT_TRUE(fs::is_empty(folder));
}

}  // namespace
}  // namespace dlaunch::launch
