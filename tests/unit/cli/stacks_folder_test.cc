// The folder dlaunch ssh keeps for `dlaunch stacks`: the job's token in it
// is the user's alone (mode 0600, in a folder of mode 0700), holds the
// token and nothing else, is never written through a planted link or over
// a planted file, and the folder goes with the job.
#include "cli/stacks_folder.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#include "../test_support/temp_dir.h"
#include "util/error.h"
#include "wire/service_endpoint.h"

namespace dlaunch::cli {
namespace {

namespace fs = std::filesystem;

constexpr const char* kToken = "0123456789abcdef0123456789abcdef";

ssh::JobPlan plan() {
  ssh::JobPlan made;
  made.master_addr = "127.0.0.1";
  made.master_port = 29500;
  made.run_id = "ssh-abc";
  return made;
}

std::string text_of(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

mode_t mode_of(const std::string& path) {
  struct stat info {};
  EXPECT_EQ(::lstat(path.c_str(), &info), 0) << path;
  return info.st_mode & 07777;
}

TEST(StacksFolder, TheTokenIsTheUsersAloneInAFolderOfItsOwn) {
  test_support::TempDir base;
  util::Environment environment({{"TMPDIR", base.path()}});
  const mode_t old_umask = ::umask(0);  // whatever the umask, the token is 0600
  auto folder = make_stacks_folder(plan(), kToken, environment);
  ::umask(old_umask);
  ASSERT_TRUE(folder.has_value());
  EXPECT_EQ(fs::path(folder->path()).parent_path(), fs::path(base.path()));
  EXPECT_EQ(fs::path(folder->path()).filename().string().rfind("dlaunch-ssh-abc-", 0), 0u) << folder->path();
  EXPECT_EQ(mode_of(folder->path()), 0700u);
  const std::string token = folder->path() + "/rdzv.token";
  EXPECT_EQ(mode_of(token), 0600u);
  EXPECT_EQ(text_of(token), std::string(kToken) + "\n");
}

TEST(StacksFolder, ItSaysWhereNodeZeroAnswers) {
  test_support::TempDir base;
  auto folder = make_stacks_folder(plan(), kToken, util::Environment({{"TMPDIR", base.path()}}));
  ASSERT_TRUE(folder.has_value());
  auto endpoint = rendezvous::find_endpoint(folder->path());
  ASSERT_TRUE(endpoint.has_value());
  EXPECT_EQ(endpoint->address, "127.0.0.1");
  EXPECT_EQ(endpoint->port, 29500);
  EXPECT_EQ(endpoint->run_id, "ssh-abc");
}

TEST(StacksFolder, ItGoesWithTheJob) {
  test_support::TempDir base;
  std::string path;
  {
    auto folder = make_stacks_folder(plan(), kToken, util::Environment({{"TMPDIR", base.path()}}));
    ASSERT_TRUE(folder.has_value());
    path = folder->path();
    ASSERT_TRUE(fs::exists(path + "/rdzv.token"));
  }
  EXPECT_FALSE(fs::exists(path));
}

TEST(StacksFolder, NoFolderIsNoErrorSinceTheJobDoesNotNeedIt) {
  test_support::TempDir base;
  auto folder = make_stacks_folder(plan(), kToken, util::Environment({{"TMPDIR", base.path() + "/missing"}}));
  EXPECT_FALSE(folder.has_value());
}

TEST(StacksFolder, ATokenLinkPlantedInTheFolderIsNotFollowed) {
  test_support::TempDir dir;
  const std::string target = dir.path() + "/elsewhere";
  std::ofstream(target) << "the user's file\n";
  ASSERT_EQ(::symlink(target.c_str(), (dir.path() + "/rdzv.token").c_str()), 0);
  EXPECT_THROW(fill_stacks_folder(dir.path(), plan(), kToken), util::SystemError);
  EXPECT_EQ(text_of(target), "the user's file\n");
}

TEST(StacksFolder, AFilePlantedAsTheTokenIsNotOverwritten) {
  test_support::TempDir dir;
  std::ofstream(dir.path() + "/rdzv.token") << "planted\n";
  EXPECT_THROW(fill_stacks_folder(dir.path(), plan(), kToken), util::SystemError);
  EXPECT_EQ(text_of(dir.path() + "/rdzv.token"), "planted\n");
}

}  // namespace
}  // namespace dlaunch::cli
