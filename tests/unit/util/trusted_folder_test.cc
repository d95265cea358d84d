// Folders dlaunch writes in: another user's, or one others may write in
// without the sticky bit, is refused with what to do; a folder below one
// that exists already must be a real folder of ours, not a planted link.
#include "util/trusted_folder.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "../test_support/temp_dir.h"
#include "../test_support/text.h"
#include "util/error.h"

namespace dlaunch::util {
namespace {

constexpr uid_t kMe = 1000;
constexpr uid_t kNobody = 65534;

struct stat folder_info(uid_t owner, mode_t mode) {
  struct stat info {};
  info.st_mode = S_IFDIR | mode;
  info.st_uid = owner;
  info.st_gid = 100;
  return info;
}

TEST(FolderDistrust, AFolderOfOursThatOnlyWeMayWriteIsTrusted) {
  EXPECT_FALSE(folder_distrust("/logs", folder_info(kMe, 0755), kMe, false));
  EXPECT_FALSE(folder_distrust("/logs", folder_info(kMe, 0700), kMe, false));
}

TEST(FolderDistrust, AnotherUsersFolderIsNotEvenForRoot) {
  auto distrust = folder_distrust("/tmp/logs", folder_info(kNobody, 0755), 0, false);
  ASSERT_TRUE(distrust);
  EXPECT_TRUE(test_support::contains(distrust->why, "belongs to another user (uid 65534), not to you (uid 0)"));
  EXPECT_TRUE(test_support::contains(distrust->fix, "Choose a folder you own"));
  EXPECT_TRUE(folder_distrust("/logs", folder_info(0, 0755), kMe, false)) << "a user's log folder is their own";
}

TEST(FolderDistrust, WritableByEveryoneWithoutTheStickyBitIsRefused) {
  auto distrust = folder_distrust("/logs", folder_info(kMe, 0777), kMe, false);
  ASSERT_TRUE(distrust);
  EXPECT_TRUE(test_support::contains(distrust->why, "may be written by every user and has no sticky bit"));
  EXPECT_TRUE(test_support::contains(distrust->fix, "chmod o-w /logs"));
  EXPECT_FALSE(folder_distrust("/logs", folder_info(kMe, 01777), kMe, false)) << "sticky, as /tmp";
}

TEST(FolderDistrust, GroupWriteIsRefusedUnlessTheGroupIsTheUsersOwn) {
  auto distrust = folder_distrust("/logs", folder_info(kMe, 0775), kMe, false);
  ASSERT_TRUE(distrust);
  EXPECT_TRUE(test_support::contains(distrust->why, "may be written by its group (gid 100)"));
  EXPECT_TRUE(test_support::contains(distrust->fix, "chmod g-w /logs"));
  EXPECT_FALSE(folder_distrust("/logs", folder_info(kMe, 0775), kMe, true)) << "umask 002 with a private group";
}

TEST(FolderDistrust, AFileIsNoFolder) {
  struct stat info = folder_info(kMe, 0644);
  info.st_mode = S_IFREG | 0644;
  EXPECT_TRUE(folder_distrust("/logs", info, kMe, false));
}

TEST(CheckTrustedFolder, AFolderMadeByMktempIsTrusted) {
  test_support::TempDir dir;
  EXPECT_NO_THROW(check_trusted_folder(dir.path(), "--log-dir"));
}

TEST(CheckTrustedFolder, AFolderEveryoneMayWriteIsRefusedNamingItAndTheFix) {
  test_support::TempDir dir;
  ASSERT_EQ(::chmod(dir.path().c_str(), 0777), 0);
  try {
    check_trusted_folder(dir.path(), "--log-dir");
    FAIL() << "a folder everyone may write was taken";
  } catch (const InputError& error) {
    EXPECT_TRUE(test_support::contains(error.what(), "--log-dir '" + dir.path() + "' may be written by every user"));
    EXPECT_TRUE(test_support::contains(error.what(), "plant symbolic links"));
    EXPECT_TRUE(test_support::contains(error.what(), "chmod o-w " + dir.path()));
  }
  ASSERT_EQ(::chmod(dir.path().c_str(), 01777), 0);
  EXPECT_NO_THROW(check_trusted_folder(dir.path(), "--log-dir")) << "the sticky bit makes it safe";
}

TEST(CheckTrustedFolder, AFolderOfAnotherUserIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a folder to another user";
  test_support::TempDir dir;
  const std::string folder = dir.path() + "/logs";
  ASSERT_TRUE(std::filesystem::create_directory(folder));
  ASSERT_EQ(::chown(folder.c_str(), kNobody, kNobody), 0);
  try {
    check_trusted_folder(folder, "--log-dir");
    FAIL() << "root took another user's folder";
  } catch (const InputError& error) {
    EXPECT_TRUE(test_support::contains(error.what(), "--log-dir '" + folder + "' belongs to another user (uid 65534)"));
  }
}

TEST(CheckTrustedFolder, AUsersOwnLinkToTheirFolderIsFollowed) {
  test_support::TempDir dir;
  std::filesystem::create_directory(dir.path() + "/real");
  std::filesystem::create_directory_symlink(dir.path() + "/real", dir.path() + "/logs");
  EXPECT_NO_THROW(check_trusted_folder(dir.path() + "/logs", "--log-dir"));
}

TEST(MakeTrustedFolder, MakesTheFolderAndItsParentsWithoutGroupWrite) {
  test_support::TempDir dir;
  const std::string folder = dir.path() + "/a/b/logs";
  mode_t old_mask = ::umask(002);
  EXPECT_NO_THROW(make_trusted_folder(folder, "--log-dir"));
  ::umask(old_mask);
  struct stat info {};
  ASSERT_EQ(::stat(folder.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 07777, 0755u);
}

TEST(MakeOwnFolders, MakesTheLastFoldersBelowOneThatExists) {
  test_support::TempDir dir;
  make_own_folders(dir.path() + "/attempt_0/rank3", 2);
  EXPECT_TRUE(std::filesystem::is_directory(dir.path() + "/attempt_0/rank3"));
  EXPECT_NO_THROW(make_own_folders(dir.path() + "/attempt_0/rank3", 2)) << "ours already: taken";
}

TEST(MakeOwnFolders, ALinkPlantedForAFolderIsRefusedAndNothingIsMadeThrough) {
  test_support::TempDir dir;
  const std::string elsewhere = dir.path() + "/elsewhere";
  std::filesystem::create_directory(elsewhere);
  std::filesystem::create_directory(dir.path() + "/logs");
  std::filesystem::create_directory_symlink(elsewhere, dir.path() + "/logs/attempt_0");
  try {
    make_own_folders(dir.path() + "/logs/attempt_0/rank0", 2);
    FAIL() << "made a folder through a link";
  } catch (const SystemError& error) {
    EXPECT_TRUE(test_support::contains(error.what(), dir.path() + "/logs/attempt_0 is a symbolic link"));
  }
  EXPECT_TRUE(std::filesystem::is_empty(elsewhere));
}

TEST(MakeOwnFolders, AFolderOfAnotherUserBelowIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a folder to another user";
  test_support::TempDir dir;
  std::filesystem::create_directory(dir.path() + "/stacks");
  ASSERT_EQ(::chown((dir.path() + "/stacks").c_str(), kNobody, kNobody), 0);
  EXPECT_THROW(make_own_folders(dir.path() + "/stacks", 1), SystemError);
}

}  // namespace
}  // namespace dlaunch::util
